"""Failure predictors for fault-aware scheduling (BGL-FAULT §4).

Key components:
    FailurePredictor: base class (override ``failure_probabilities``).
    NullPredictor: predicts nothing; the scheduler without prediction.
    PREDICTORS: selection by name (``PREDICTORS.make("null")``).
"""

from predictors.base import PREDICTORS, FailurePredictor, NullPredictor

__all__ = ["PREDICTORS", "FailurePredictor", "NullPredictor"]
