"""`python -m on_lstm_keras.cli`, the same as the `on-lstm` command."""

import sys

from on_lstm_keras.cli import main

sys.exit(main())
