"""Budget: a wall-clock limit per request and the process-wide stop flag end a computation with a reason."""

import threading

import pytest


def test_the_stop_flag_ends_a_budget_at_once():
    from discrete_robot.budget import STOP, Budget, BudgetExceededError

    budget = Budget(60.0)
    budget.check()
    STOP.set()
    try:
        with pytest.raises(BudgetExceededError, match="shutting down"):
            budget.check()
    finally:
        STOP.clear()
    expired = Budget(0.0, limit="request_timeout")
    threading.Event().wait(0.01)
    with pytest.raises(BudgetExceededError, match="request_timeout = 0 s"):
        expired.check()
