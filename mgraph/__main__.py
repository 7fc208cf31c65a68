"""``python -m mgraph``: the mgraph command."""
import sys

from .cli import main

sys.exit(main())
