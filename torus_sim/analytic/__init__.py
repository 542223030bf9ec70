"""Analytic models.

Key components:
    ckpt_migration: preventive checkpointing vs preventive migration yields (CKPT-MIG).
"""
