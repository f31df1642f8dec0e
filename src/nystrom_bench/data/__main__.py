"""``python -m nystrom_bench.data list | info NAME | fetch NAME``."""
import sys

from . import main

sys.exit(main())
