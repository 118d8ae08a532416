"""`on-lstm evaluate`: unlabeled F1 of a model's or a baseline's trees."""

import json
import math
import sys

from on_lstm_keras.cli._args import POSITIVE
from on_lstm_keras.cli._args import json_safe
from on_lstm_keras.cli._args import layer_or_all


def add_evaluate_arguments(parser):
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--model", help="model directory")
    source.add_argument("--baseline",
                        choices=("left", "right", "balanced", "random"))
    parser.add_argument("--treebank", choices=("ptb", "sinica"), required=True)
    parser.add_argument("--max-length", type=POSITIVE, default=None,
                        help="only sentences of at most N words (10: WSJ10)")
    parser.add_argument("--nltk-data", default=None,
                        help="folder with corpora/treebank or "
                             "corpora/sinica_treebank (default: nltk's path)")
    parser.add_argument("--layer", type=layer_or_all, default=None,
                        help="layer number from 1, or 'all' (default: middle)")
    parser.add_argument("--split", choices=("official", "plain"),
                        default="official")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the random baseline")
    parser.add_argument("--json", action="store_true",
                        help="print one JSON object")


def run_evaluate(args):
    from on_lstm_keras.parsing import runs

    result = runs.evaluate_treebank(
        args.treebank, model=args.model, baseline=args.baseline,
        layer=args.layer, max_length=args.max_length,
        nltk_data=args.nltk_data, seed=args.seed, split=args.split,
    )
    if args.model:
        result["model"] = args.model
    if not result["sentences"]:
        print(f"on-lstm evaluate: warning: 0 sentences were scored (none of "
              f"the {result['skipped']} selected has 2 words or more), so "
              "there is no F1", file=sys.stderr)
    if args.json:
        print(json.dumps(json_safe(result), allow_nan=False))
        return result
    what = f"baseline {args.baseline}" if args.baseline else f"model {args.model}"
    print(f"{args.treebank}: {result['sentences']} sentences scored "
          f"({result['skipped']} with fewer than 2 words skipped), {what}")
    rows = result.get("per_layer") or [result]

    def f1(value):
        return f"{value:.1f}" if math.isfinite(value) else "n/a"

    for row in rows:
        label = f"layer {row['layer']}" if "layer" in row else "trees"
        print(f"  {label}: sentence F1 {f1(row['sentence_f1'])}  "
              f"corpus F1 {f1(row['corpus_f1'])}")
    return result
