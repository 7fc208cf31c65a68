"""``python -m mgraph``: the mgraph command."""
import sys

from mgraph.cli import main

if __name__ == "__main__":  # not when a worker process re-imports the main module
    sys.exit(main())
