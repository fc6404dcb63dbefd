# discrete_robot: every target does its own set-up first (idempotent, seconds when done).
VENV   := $(CURDIR)/.venv
PYTHON := $(VENV)/bin/python
export AMENT_PREFIX_PATH := $(VENV)$(if $(AMENT_PREFIX_PATH),:$(AMENT_PREFIX_PATH))
export RMW_IMPLEMENTATION ?= rmw_fastrtps_cpp
export PATH := $(VENV)/bin:$(PATH)
export PYTHONUNBUFFERED := 1

.PHONY: setup test demo bench fuzz soak lint clean

setup:
	@scripts/setup_env.sh

# three pytest-xdist workers on two cores, each ROS test on a domain of its own (test/conftest.py): the ROS tests
# mostly wait on simulated time, so a third worker uses the idle CPU (906 tests: 6 min 31 s with 3, 9 min 37 s with 2)
TEST_WORKERS ?= 3
test: setup
	$(PYTHON) -m pytest -q -n $(TEST_WORKERS)

demo: setup
	$(PYTHON) -m discrete_robot experiment demo --output-dir results/demo

bench: setup
	@$(PYTHON) -c 'import pinocchio, mujoco, toppra, crocoddyl' 2>/dev/null || $(PYTHON) -m pip install -q -r requirements-bench.txt
	$(PYTHON) bench/run.py --output results/bench.json

fuzz: setup
	$(PYTHON) scripts/fuzz.py --cases 5000 --output results/fuzz.json

soak: setup
	$(PYTHON) scripts/soak.py --space-steps 1000000 --arm-steps 1000000 --requests 10000 --bringup-seconds 600 --output results/soak.json
	$(PYTHON) scripts/shutdown.py --output results/shutdown.json

lint: setup
	$(VENV)/bin/ruff check .

clean:
	rm -rf $(VENV) results build install log .pytest_cache .ruff_cache
