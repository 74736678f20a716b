"""Conditional-update risks (SPEC A3, A4): matchingRules, PromQL evaluation, cache."""
