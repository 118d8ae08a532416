"""`on-lstm parse`: trees of sentences with a trained model."""

import sys

from on_lstm_keras.cli._args import POSITIVE


def format_parse(parse, fmt):
    from on_lstm_keras import parsing

    if parse.tree is None:
        return "" if fmt != "json" else "null"
    if fmt == "json":
        return parsing.to_json(parse.tree)
    if fmt == "brackets":
        return parsing.to_brackets(parse.tree)
    return parsing.ascii_tree(parse.tree)


def add_parse_arguments(parser):
    parser.add_argument("--model", required=True, help="model directory")
    parser.add_argument("--layer", type=POSITIVE, default=None,
                        help="layer number from 1 (default: the middle one)")
    parser.add_argument("--format", choices=("json", "brackets", "ascii"),
                        default="json")
    parser.add_argument("--presegmented", action="store_true",
                        help="words are separated by spaces; no jieba")
    parser.add_argument("--split", choices=("official", "plain"),
                        default="official")
    parser.add_argument("--file", default=None,
                        help="read sentences from a UTF-8 file, one a line")
    parser.add_argument("sentences", nargs="*",
                        help="sentences (default: one a line on stdin)")


def read_input_sentences(args):
    if args.sentences:
        return list(args.sentences)
    if args.file:
        from on_lstm_keras.data.corpora import read_sentences

        return read_sentences(args.file, split=False)
    from on_lstm_keras.data.corpora import decode_lines

    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:  # already text (e.g. replaced by a StringIO)
        return [line.rstrip("\r\n") for line in sys.stdin]
    return [line.rstrip("\r\n") for _, line in decode_lines(stream, "<stdin>")]


def run_parse(args):
    from on_lstm_keras.parsing import runs
    from on_lstm_keras.models.saving import load_run

    run = load_run(args.model)
    sentences = read_input_sentences(args)
    for parse in runs.parse(run, sentences, layer=args.layer,
                                presegmented=args.presegmented,
                                split=args.split):
        print(format_parse(parse, args.format), flush=True)
