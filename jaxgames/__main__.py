"""`python -m jaxgames`: the same as the `jaxgames` command."""

import sys

from jaxgames.cli import main

sys.exit(main())
