"""Shared test helpers."""

import importlib.util
import os

import pytest


def need(module):
    """Import a peer package; skip without it, unless NEARDUP_REQUIRE_PEERS
    is set (as in CI), where a missing peer fails the test."""
    if importlib.util.find_spec(module) is None:
        if os.environ.get("NEARDUP_REQUIRE_PEERS"):
            pytest.fail(f"{module} is required here (NEARDUP_REQUIRE_PEERS) but is not installed")
        pytest.skip(f"{module} is not installed")
    return importlib.import_module(module)
