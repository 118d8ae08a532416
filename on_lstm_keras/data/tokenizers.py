"""Word tokenizers: jieba for Chinese, whitespace for pre-tokenized text."""

import os

from on_lstm_keras.utils import validation as check
from on_lstm_keras.utils.extras import require


class WhitespaceTokenizer:
    """Splits on whitespace; optionally lower-cases.

    Example:

    >>> WhitespaceTokenizer()("the  cat sat")
    ['the', 'cat', 'sat']
    """

    def __init__(self, lowercase=False):
        self.lowercase = lowercase

    def __call__(self, text):
        if self.lowercase:
            text = text.lower()
        return text.split()

    def get_config(self):
        return {"name": "whitespace", "lowercase": self.lowercase}


class JiebaTokenizer:
    """Chinese word segmentation with jieba's precise mode, dropping
    whitespace tokens. Each tokenizer has its own `jieba.Tokenizer`, so a user
    dictionary loaded here does not leak into other code that uses jieba.

    Args:
        user_dict: Optional path of a jieba user dictionary (one word per
            line, optionally with a frequency and a tag).
        hmm: Whether jieba may join unseen character runs into new words
            with its HMM (jieba's default, `True`).

    Example:

    >>> JiebaTokenizer()("爱真的需要勇气")
    ['爱', '真的', '需要', '勇气']
    """

    def __init__(self, user_dict=None, hmm=True):
        import logging

        jieba = require("jieba", "zh", "Segmenting Chinese (JiebaTokenizer)")

        jieba.setLogLevel(logging.WARNING)
        self._tokenizer = jieba.Tokenizer()
        self.user_dict = user_dict
        self.hmm = bool(hmm)
        if user_dict is not None:
            if not os.path.isfile(user_dict):
                raise FileNotFoundError(
                    f"Argument `user_dict`: no such file, received: "
                    f"user_dict={user_dict!r}"
                )
            self._tokenizer.load_userdict(user_dict)

    def __call__(self, text):
        return [
            w for w in self._tokenizer.lcut(text, HMM=self.hmm) if w.strip()
        ]

    def get_config(self):
        return {"name": "jieba", "user_dict": self.user_dict, "hmm": self.hmm}


def get_tokenizer(config):
    """Builds a tokenizer from a name (`"jieba"`, `"whitespace"`) or config.

    Example:

    >>> get_tokenizer({"name": "whitespace", "lowercase": True})("A b")
    ['a', 'b']
    """
    if isinstance(config, str):
        config = {"name": config}
    config = dict(config)
    name = check.choice("tokenizer", config.pop("name", None),
                        ("jieba", "whitespace"))
    if name == "jieba":
        return JiebaTokenizer(**config)
    return WhitespaceTokenizer(**config)
