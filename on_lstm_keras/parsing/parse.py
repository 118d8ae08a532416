"""`Parse`: one parsed sentence, its tree and the scores it was built from."""

import dataclasses


@dataclasses.dataclass
class Parse:
    """One parsed sentence.

    Attributes:
        words: The sentence's words.
        tree: Its nested-list tree (`None` for an empty sentence).
        split_scores: The scores the tree was built from, one per word:
            `d_f` of the chosen layer for one layer of a forward model, else
            the z-scored combination of `parsing.scores`.
        layer_distances: `d_f` of every layer of the forward model, one
            list per layer (the first is layer 1), one number per word
            (empty when only a backward model was read).
        backward_layer_distances: The same for the backward model, in
            input order (word `i`'s value scores the boundary after it);
            empty when no backward model was read.
        reading: Where the split scores come from: `"forward"`,
            `"backward"` or `"both"`.
        layer: The layer read (a number from 1) or `"mean"`.
    """

    words: list
    tree: object
    split_scores: list
    layer_distances: list = dataclasses.field(default_factory=list)
    backward_layer_distances: list = dataclasses.field(default_factory=list)
    reading: str = None
    layer: object = None
