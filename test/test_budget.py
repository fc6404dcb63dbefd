"""budget: a wall-clock limit per request and the process-wide stop flag end a computation with a reason."""

import threading

import pytest

from discrete_robot import budget


def test_the_stop_flag_ends_any_computation_at_once():
    budget.check()
    budget.STOP.set()
    try:
        with pytest.raises(budget.BudgetExceededError, match="shutting down"):
            budget.check()
    finally:
        budget.STOP.clear()


def test_a_spent_budget_names_its_parameter_and_ends_with_its_block():
    with budget.limited(0.0, limit="request_timeout"):
        threading.Event().wait(0.01)
        with pytest.raises(budget.BudgetExceededError, match="request_timeout = 0 s"):
            budget.check()
    budget.check()


def test_each_thread_has_its_own_budget():
    errors = []

    def other_thread():
        try:
            budget.check()
        except budget.BudgetExceededError as error:
            errors.append(error)

    with budget.limited(0.0):
        threading.Event().wait(0.01)
        thread = threading.Thread(target=other_thread)
        thread.start()
        thread.join()
    assert errors == []


def test_renewing_a_spent_budget_gives_the_next_computation_its_whole_budget():
    with budget.limited(0.5, limit="case_timeout") as limit:
        threading.Event().wait(0.6)
        with pytest.raises(budget.BudgetExceededError, match="case_timeout = 0.5 s"):
            budget.check()
        limit.renew()
        budget.check()      # a load would have to stall this thread for 0.5 s between two lines to fail it
        threading.Event().wait(0.6)
        with pytest.raises(budget.BudgetExceededError):
            budget.check()
