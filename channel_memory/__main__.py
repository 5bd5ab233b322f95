import sys

from channel_memory.cli import main

sys.exit(main())
