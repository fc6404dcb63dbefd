"""Entry point of ``python -m discrete_robot``."""

import sys

from discrete_robot.cli import main

sys.exit(main())
