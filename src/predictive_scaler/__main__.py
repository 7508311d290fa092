import sys

from predictive_scaler.cli import main

sys.exit(main())
