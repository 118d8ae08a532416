"""Small helpers the rest of the package builds on: argument checks
(`validation`), atomic file writes (`atomic`), the lock on a directory in
use (`lock`), optional dependencies (`extras`) and what the package's RNN
layers share (`rnn`). They import nothing from the package above them."""
