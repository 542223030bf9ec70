"""Failure predictors for fault-aware scheduling (BGL-FAULT §4).

Key components:
    FailurePredictor: base class (override ``failure_probabilities``).
    NullPredictor: predicts nothing; the scheduler without prediction.
    make_predictor / register_predictor: selection by name.
"""

from predictors.base import PREDICTORS, FailurePredictor, NullPredictor, make_predictor, register_predictor

__all__ = ["PREDICTORS", "FailurePredictor", "NullPredictor", "make_predictor", "register_predictor"]
