"""Training-step speed of ONLSTM against keras.layers.LSTM of the same size.

One training step is a forward and backward pass plus an SGD update, on a
batch of random inputs, with a mean-squared loss on every output step
(`return_sequences=True`). In one process, on one Keras backend, the script
builds `ONLSTM` and `keras.layers.LSTM` with the same sizes, warms each up,
then times them interleaved step by step and reports the median step time
of each and their ratio, and the median CPU time of the process per step
(all its threads: more CPU than wall time means the step kept more than
one core busy; on a loaded machine the wall times stretch, and the CPU
times show the work). The inputs are converted to backend-native tensors
once, before timing, so the step times measure the layers rather than
NumPy-to-tensor conversion.

With `--forward-only`, a step is a forward pass alone (`predict_on_batch`),
the path that `predict` and the parser use. `--breakdown` (forward only)
also times two stand-ins that say where ONLSTM's extra forward time goes:
ONLSTM's own loop running an LSTM cell on an LSTM's matmul (the first
`4 * units` columns of ONLSTM's weights: the loop's cost against Keras'
loop), and the same with ON-LSTM's whole matmul (the master-gate columns
computed and left unused: their matmul's cost); what ONLSTM takes beyond
the second is its master gates and interval update.

With `--torch`, `torch.nn.LSTM` of the same size (batch_first, forward +
backward + SGD step, or a forward pass alone with `--forward-only`;
torch's default threads, or the GPU where PyTorch sees one, where it runs
cuDNN's kernel) is timed the same way, after
the Keras runs, in processes of its own: on small machines torch's OpenMP
threads now and then stall for a whole process (1.5 s steps instead of
16 ms) next to TensorFlow's thread pools. So torch is timed in 3 fresh
processes and the lowest median is kept (which favours torch); the summary
compares it with ONLSTM on its best backend.

With `--parse`, the script instead measures the parser's throughput in
sentences per second: `parse_sentences` (distances of every layer, then
the trees) on a language model of the `small` preset's size with random
weights, or on a trained run (`--model DIR`), over `--sentences N` random
sentences whose lengths follow a fixed spread (2 to 40 words), or over a
treebank's sentences (`--treebank sinica|ptb`, with `--nltk-data`). It
also reports the share of the time spent in the model calls (medians of
`--passes` passes of each kind, alternating), and the first pass on its
own: it compiles the model's reader, once per bucket shape, which later
passes reuse.

On a machine with a GPU each backend runs there: Keras' LSTM runs cuDNN's
kernel (`use_cudnn="auto"`; on JAX through `jax.experimental.rnn`, in
Keras 3.15), ONLSTM its fused op compiled by XLA on TensorFlow and JAX
(on torch it steps through its cell). The `paper` config is the paper's
PTB layer (`--configs paper`).

With `--lengths`, the script instead measures what new input shapes
cost: `predict_on_batch` over 20 batches of 20 different lengths (spread
evenly over half to one and a half times the config's time steps) against
20 batches of the config's own length, on a fresh model of each layer
each time, so that every compile the first pass does is in its time. The
ratio of the two is 1 where a new length costs nothing and grows with
every compile a new length triggers (JAX compiles once per input shape;
TensorFlow's graph relaxes the shape after its second). The same
batches again, once compiled, show the steady cost.

With `--dtype-policy mixed_bfloat16` both layers compute in bfloat16
(weights and states kept in float32 where Keras keeps them); the matmul
bound stays the float32 one, so its share shows what narrower numbers
gain over it.

With `--profile` (TensorFlow only), the script instead runs TensorFlow's
profiler over `--steps` steps of each layer, one layer after the other,
and prints the time its kernels took by op type (summed over threads, per
step) and how many of each a step ran, side by side: where one layer's
step spends time that the other's does not. Kernel time summed over
threads is not wall time: kernels off the step's critical path run on
another core.

Each timing row also gives the matmul bound of both layers' steps: their
matmul FLOPs (`step_matmuls`: per time step the product of `[x_t,
h_(t-1)]` by the weights, and for training its two gradients, the weights'
one over all time steps at once) and the time those matmuls alone take at
the rate this backend reaches at each of their shapes, timed in the same
process (`matmul_rate`), beside the rate of a 2048-cube matmul. The step's
share of its bound (bound / step time) says how much of the step is
anything but matmul: 100% is a step that is all matmul at its shapes.

Every run first prints the machine it runs on: CPU model, cores (and
those this process may use), thread settings, and library versions, so
that a figure can be traced to its machine. With `--record FILE` it also
writes the result record of the run to FILE (`runs.result_record`): the
rows the table is built from (the parse row, or the profile's op times),
each backend's versions and threads, with the command, commit, machine and
library versions behind them.

    python benchmarks/bench_layer.py                     # $KERAS_BACKEND
    python benchmarks/bench_layer.py --backends tensorflow,jax --torch \\
        --record docs/results/bench_layer_train.json
    python benchmarks/bench_layer.py --forward-only
    python benchmarks/bench_layer.py --forward-only --breakdown
    python benchmarks/bench_layer.py --parse --sentences 2000
    KERAS_BACKEND=jax python benchmarks/bench_layer.py --lengths
    python benchmarks/bench_layer.py --profile --configs big --jit false

The Keras backend is fixed when Keras is imported, so `--backends` runs this
script once per backend in a subprocess and prints one table at the end.
On TensorFlow, `--jit` chooses between the plain graph (`jit_compile=False`;
note that Keras' `"auto"` means no XLA on CPU) and XLA (`jit_compile=True`);
JAX always compiles with `jax.jit`.
"""

import argparse
import contextlib
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time

CONFIGS = {
    # name: (batch, time, input, units, chunk)
    "big": (64, 70, 200, 650, 10),
    "small": (32, 35, 128, 256, 8),
    # The paper's PTB layer: batch 20, BPTT 70, 400 in, 1150 units.
    "paper": (20, 70, 400, 1150, 10),
}
# The bound's reference: a square float32 matmul this large runs at about
# the best rate the backend's matmul reaches on this machine.
LARGE_MATMUL = 2048
# Each matmul rate: the median of this many timings of a burst of calls
# lasting at least MATMUL_BURST_SECONDS.
MATMUL_TIMINGS = 7
MATMUL_BURST_SECONDS = 0.02
TORCH_PROCESSES = 3
# ONLSTM / keras LSTM: the target, for a training step and a forward
# pass; and the aim for the forward pass (the parser's and `predict`'s).
TARGET_OVER_KERAS = 1.05
AIM_FORWARD_OVER_KERAS = 0.9
TARGET_OVER_TORCH = 1.3
# `--lengths`: predicting this many batches of as many lengths costs at
# most TARGET_LENGTHS times as many batches of one length.
LENGTHS = 20
TARGET_LENGTHS = 2.0


# `--parse`'s defaults: random sentences, and timed passes of each kind.
PARSE_SENTENCES = 2000
PARSE_PASSES = 3
PROFILE_TOP = 16
# `--dtype-policy`: the Keras dtype policies both layers may be timed in.
DTYPE_POLICIES = ("float32", "mixed_bfloat16")
# `--jit` on TensorFlow: the `jit_compile` settings to run.
TF_JIT_MODES = {"both": [False, True], "true": [True], "false": [False]}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n".join(__doc__.split("\n")[1:]),
    )
    parser.add_argument(
        "--configs", default="small,big",
        help="comma-separated subset of: %s (default: small,big)"
        % ", ".join("%s=%s" % kv for kv in CONFIGS.items()),
    )
    parser.add_argument("--steps", type=int, default=20,
                        help="timed steps per model; the median is reported "
                             "(default: 20)")
    parser.add_argument("--warmup", type=int, default=3,
                        help="untimed steps per model first (default: 3)")
    parser.add_argument(
        "--jit", default="both", choices=["both", "true", "false"],
        help="XLA for the Keras models on TensorFlow (default: both); "
             "JAX always compiles",
    )
    parser.add_argument("--torch", action="store_true",
                        help="also time torch.nn.LSTM (needs PyTorch)")
    parser.add_argument(
        "--dtype-policy", default="float32", choices=DTYPE_POLICIES,
        help="Keras dtype policy of both layers (default: float32); "
             "mixed_bfloat16 computes in bfloat16 with float32 weights")
    parser.add_argument(
        "--backends", default=None,
        help="comma-separated Keras backends to run, one subprocess each "
             "(e.g. tensorflow,jax); default: the current backend only",
    )
    parser.add_argument("--forward-only", action="store_true",
                        help="time forward passes only (predict_on_batch)")
    parser.add_argument(
        "--breakdown", action="store_true",
        help="with --forward-only: also time ONLSTM's loop with an LSTM "
             "cell, at an LSTM's and at ON-LSTM's matmul width")
    parser.add_argument("--lengths", action="store_true",
                        help="measure the cost of new input lengths in "
                             "predict_on_batch instead of layer steps")
    parser.add_argument("--parse", action="store_true",
                        help="measure the parser's sentences per second "
                             "instead of layer steps")
    parser.add_argument("--model", default=None,
                        help="with --parse: a trained run's directory "
                             "(default: random weights, `small` preset size)")
    parser.add_argument("--sentences", type=int, default=None,
                        help="with --parse, not with --treebank: random "
                             "sentences to parse (default: %d)"
                             % PARSE_SENTENCES)
    parser.add_argument("--passes", type=int, default=None,
                        help="with --parse: timed passes over the sentences, "
                             "each a distances-only pass then a whole parse; "
                             "the medians are reported (default: %d)"
                             % PARSE_PASSES)
    parser.add_argument("--treebank", choices=("ptb", "sinica"), default=None,
                        help="with --parse: parse this treebank's sentences "
                             "instead of random ones")
    parser.add_argument("--nltk-data", default=None,
                        help="with --treebank: folder holding the corpora "
                             "(default: nltk's data path)")
    parser.add_argument(
        "--profile", action="store_true",
        help="TensorFlow only: kernel time by op type of each layer's step "
             "from TensorFlow's profiler, instead of timings")
    parser.add_argument("--top", type=int, default=None,
                        help="with --profile: op types to list, the rest "
                             "summed in one row (default: %d)" % PROFILE_TOP)
    parser.add_argument("--json", action="store_true",
                        help="print one JSON line per result (used with "
                             "--backends)")
    parser.add_argument("--record", default=None, metavar="FILE",
                        help="write the result record (the rows, with the "
                             "command, commit, machine and versions) to "
                             "FILE")
    parser.add_argument("--torch-only", action="store_true",
                        help=argparse.SUPPRESS)  # the torch subprocess
    args = parser.parse_args(argv)
    names = args.configs.split(",")
    unknown = [n for n in names if n not in CONFIGS]
    if unknown:
        parser.error("unknown config(s) %s; choose from %s"
                     % (", ".join(unknown), ", ".join(CONFIGS)))
    if args.steps < 1 or args.warmup < 0:
        parser.error("--steps must be >= 1 and --warmup >= 0, received "
                     "--steps %d --warmup %d" % (args.steps, args.warmup))
    if args.sentences is not None and args.sentences < 1:
        parser.error("--sentences must be >= 1, received %d" % args.sentences)
    if args.passes is not None and args.passes < 1:
        parser.error("--passes must be >= 1, received %d" % args.passes)
    if args.breakdown and not args.forward_only:
        parser.error("--breakdown goes with --forward-only (its stand-ins "
                     "have no backward pass of their own)")
    # Flags that would otherwise be ignored are refused, naming them.
    parse_only = [
        "%s %s" % (flag, value) for flag, value in (
            ("--model", args.model), ("--treebank", args.treebank),
            ("--sentences", args.sentences), ("--passes", args.passes),
        ) if value is not None
    ]
    if parse_only and not args.parse:
        parser.error("--model, --treebank, --sentences and --passes go with "
                     "--parse, received %s without it" % ", ".join(parse_only))
    if args.treebank and args.sentences is not None:
        parser.error("--sentences sets how many random sentences to parse; "
                     "with --treebank %s the treebank's own sentences are "
                     "parsed: drop --sentences %d"
                     % (args.treebank, args.sentences))
    if args.nltk_data is not None and not args.treebank:
        parser.error("--nltk-data goes with --treebank, received "
                     "--nltk-data %s without it" % args.nltk_data)
    if args.top is not None and not args.profile:
        parser.error("--top goes with --profile, received --top %d without "
                     "it" % args.top)
    if args.top is not None and args.top < 1:
        parser.error("--top must be >= 1, received %d" % args.top)
    if args.profile and (args.torch or args.backends or args.parse
                         or args.breakdown):
        parser.error("--profile runs TensorFlow's profiler in this process: "
                     "drop --torch, --backends, --parse and --breakdown "
                     "(set KERAS_BACKEND=tensorflow instead)")
    if args.lengths and (args.parse or args.profile or args.forward_only
                         or args.torch or args.backends):
        parser.error("--lengths times forward passes of its own, on the "
                     "current backend: drop --parse, --profile, "
                     "--forward-only, --torch and --backends (set "
                     "KERAS_BACKEND instead)")
    if args.dtype_policy != "float32" and (args.lengths or args.parse
                                           or args.profile):
        parser.error("--dtype-policy sets the layers of the step timings; "
                     "--lengths, --parse and --profile time float32 models, "
                     "received --dtype-policy %s with one of them"
                     % args.dtype_policy)
    if args.parse and (args.torch or args.backends):
        parser.error("--parse runs on the current backend only: drop "
                     "--torch and --backends (set KERAS_BACKEND instead)")
    # Filled in only now: `None` above told a flag given from its default.
    if args.sentences is None:
        args.sentences = PARSE_SENTENCES
    if args.passes is None:
        args.passes = PARSE_PASSES
    if args.top is None:
        args.top = PROFILE_TOP
    return args


def _version(module):
    try:
        return __import__(module).__version__
    except Exception:  # not installed, or broken: say so, don't fail
        return None


def environment():
    """What a figure depends on: the machine, threads and versions."""
    # Imported here: the torch subprocesses never load the package (nor
    # TensorFlow with it, whose thread pools stall torch's).
    from on_lstm_keras import runs

    env = {
        **runs.machine(),  # the CPU, its logical and usable cores
        "python": platform.python_version(),
        "platform": platform.platform(),
    }
    for var in ("OMP_NUM_THREADS", "TF_NUM_INTRAOP_THREADS",
                "TF_NUM_INTEROP_THREADS", "XLA_FLAGS", "KERAS_BACKEND"):
        if os.environ.get(var):
            env[var] = os.environ[var]
    return env


def backend_environment():
    """Versions and thread settings of the running Keras backend."""
    import keras

    env = {"keras": keras.__version__, "backend": keras.backend.backend(),
           "numpy": _version("numpy")}
    if env["backend"] == "tensorflow":
        import tensorflow as tf

        env["tensorflow"] = tf.__version__
        # 0 means TensorFlow's default: one thread per usable core.
        env["tf_intra_op_threads"] = (
            tf.config.threading.get_intra_op_parallelism_threads())
        env["tf_inter_op_threads"] = (
            tf.config.threading.get_inter_op_parallelism_threads())
        env["tf_gpus"] = [
            tf.config.experimental.get_device_details(g).get("device_name",
                                                             g.name)
            for g in tf.config.list_physical_devices("GPU")]
    elif env["backend"] == "jax":
        import jax

        env["jax"] = jax.__version__
        env["jax_devices"] = [
            getattr(d, "device_kind", None) or str(d) for d in jax.devices()]
    elif env["backend"] == "torch":
        import torch

        env["torch"] = torch.__version__
        env["torch_threads"] = torch.get_num_threads()
        env["torch_device"] = _torch_device_name()
    return env


def _torch_device():
    """`cuda` where PyTorch sees a GPU, else `cpu`: the device that Keras'
    torch backend also puts its tensors on."""
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def _torch_device_name():
    import torch

    if torch.cuda.is_available():
        return "cuda: %s (cuDNN %s)" % (torch.cuda.get_device_name(),
                                         torch.backends.cudnn.version())
    return "cpu"


def print_environment(env):
    print("Machine: %s" % ", ".join("%s=%s" % kv for kv in env.items()),
          flush=True)


def child_argv(args, torch_only=False):
    """The command line of a subprocess, from parsed args."""
    argv = ["--configs", args.configs, "--steps", str(args.steps),
            "--warmup", str(args.warmup), "--jit", args.jit, "--json",
            "--dtype-policy", args.dtype_policy]
    if args.forward_only:
        argv.append("--forward-only")
    if args.breakdown:
        argv.append("--breakdown")
    if torch_only:
        argv.append("--torch-only")
    return argv


def run_child(argv, env):
    """Runs this script with `argv`; yields the JSON rows it prints."""
    # Its stderr (backend start-up chatter) is kept aside and shown only if
    # it fails.
    with tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), *argv],
            env=env, stdout=subprocess.PIPE, stderr=err, text=True,
        )
        for line in proc.stdout:
            if line.startswith("{"):
                yield json.loads(line)
        if proc.wait():
            err.seek(0)
            sys.stderr.write(err.read()[-3000:])
            raise SystemExit("benchmark subprocess failed: %s"
                             % " ".join(argv))


def check_torch():
    try:
        import torch  # noqa: F401
    except ImportError as e:
        raise SystemExit(
            "--torch needs PyTorch, but `import torch` failed (%s). Install "
            "it (e.g. `pip install torch`) or drop --torch." % e
        )


# The two layers compared, by their keys in a result row, and as tables
# name them.
LAYER_NAMES = {"onlstm": "ONLSTM", "keras_lstm": "keras LSTM"}


def compared_layers(units, chunk):
    """`{key: factory}` of the two layers compared, of one size, each
    returning its whole sequence: `ONLSTM` and `keras.layers.LSTM`."""
    import keras

    from on_lstm_keras import ONLSTM

    return {
        "onlstm": lambda: ONLSTM(units, chunk, return_sequences=True),
        "keras_lstm": lambda: keras.layers.LSTM(units, return_sequences=True),
    }


def keras_step_fn(layer_factory, cfg, jit, forward_only=False):
    import keras
    import numpy as np

    batch, time_steps, features, units, _ = cfg
    inputs = keras.Input((time_steps, features), batch_size=batch)
    outputs = layer_factory()(inputs)
    model = keras.Model(inputs, outputs)
    model.compile(keras.optimizers.SGD(0.01), "mse", jit_compile=jit)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(batch, time_steps, features)).astype("float32")
    y = rng.normal(size=(batch, time_steps, units)).astype("float32")
    # Backend-native tensors, converted once: a NumPy batch would add its
    # conversion (about 20 ms here) to every step of both models.
    x = keras.ops.convert_to_tensor(x)
    y = keras.ops.convert_to_tensor(y)

    if forward_only:
        def step():
            # Returns NumPy, so the pass has finished.
            model.predict_on_batch(x)
    else:
        def step():
            # Returns the loss as a Python float, so the step has finished.
            model.train_on_batch(x, y)

    return step


def torch_step_fn(cfg, forward_only=False):
    import torch

    batch, time_steps, features, units, _ = cfg
    device = _torch_device()  # on a GPU, the cuDNN kernel
    torch.manual_seed(0)
    lstm = torch.nn.LSTM(features, units, batch_first=True).to(device)
    opt = torch.optim.SGD(lstm.parameters(), lr=0.01)
    x = torch.randn(batch, time_steps, features, device=device)
    y = torch.randn(batch, time_steps, units, device=device)

    if forward_only:
        def step():
            with torch.no_grad():
                out, _ = lstm(x)
            out.cpu()  # waits for the device, as predict_on_batch does

        return step

    def step():
        # `loss.item()` waits for the device, so the step has finished.
        opt.zero_grad()
        out, _ = lstm(x)
        loss = torch.nn.functional.mse_loss(out, y)
        loss.backward()
        opt.step()
        loss.item()

    return step


def breakdown_recurrences():
    """`--breakdown`'s stand-ins for ONLSTM's recurrence: `{"name": class}`.

    Both run ONLSTM's own loop (`FusedRecurrence.forward`) with an LSTM's
    cell, `c = σ(f)∘c₋₁ + σ(i)∘tanh(ĉ)`, `h = σ(o)∘tanh(c)`, on the gate
    columns `[i, f, ĉ, o]` that ONLSTM's fused weights start with (Keras'
    LSTM's gate order): `loop_lstm_cell` multiplies by those `4 * units`
    columns only (an LSTM's matmul), `loop_lstm_cell_wide` by all of them
    (ON-LSTM's matmul; the master-gate columns are left unused). Forward
    only: their gradients would be ON-LSTM's.
    """
    from keras import ops

    from on_lstm_keras.layers.fused import FusedRecurrence

    class LSTMCellInTheLoop(FusedRecurrence):
        def cell(self, z, c_prev):
            z_i, z_f, z_c, z_o = ops.split(
                z[:, :4 * self.units], 4, axis=-1)
            c = ops.sigmoid(z_f) * c_prev + ops.sigmoid(z_i) * ops.tanh(z_c)
            return ops.sigmoid(z_o) * ops.tanh(c), c, {}

    class NarrowLSTMCellInTheLoop(LSTMCellInTheLoop):
        def forward(self, x, kernel, bias, recurrent_kernel, *rest):
            n = 4 * self.units
            return super().forward(
                x, kernel[:, :n], None if bias is None else bias[:n],
                recurrent_kernel[:, :n], *rest)

    return {"loop_lstm_cell": NarrowLSTMCellInTheLoop,
            "loop_lstm_cell_wide": LSTMCellInTheLoop}


@contextlib.contextmanager
def fused_recurrence_class(cls):
    """ONLSTM layers built and traced inside run `cls` as their fused
    recurrence."""
    from on_lstm_keras.layers.fused import recurrence

    original = recurrence.FusedRecurrence
    recurrence.FusedRecurrence = cls
    try:
        yield
    finally:
        recurrence.FusedRecurrence = original


def step_matmuls(cfg, layer, mode):
    """The matmuls of one step of `layer` (`"onlstm"` or `"keras_lstm"`)
    at `cfg`, as `[(m, k, n, count)]`: `count` products of `(m, k)` by
    `(k, n)`.

    Each time step multiplies `[x_t, h_(t-1)]`, `(batch, input + units)`,
    by the weights, `(input + units, gates)`: `gates` is `4 * units`, and
    ON-LSTM adds `2 * units / chunk` master-gate columns. A training step
    adds, per time step, the gradient of `[x_t, h_(t-1)]`, `(batch, gates)`
    by `(gates, input + units)`, and once the weights' gradient over every
    time step, `(input + units, batch * time)` by `(batch * time, gates)`:
    the same FLOPs again twice, at the shapes that run them fastest.
    """
    batch, time_steps, features, units, chunk = cfg
    gates = 4 * units + (2 * (units // chunk) if layer == "onlstm" else 0)
    inner = features + units
    products = [(batch, inner, gates, time_steps)]
    if mode == "train":
        products += [(batch, gates, inner, time_steps),
                     (inner, batch * time_steps, gates, 1)]
    return products


def matmul_gflop(products):
    """The FLOPs of `step_matmuls`' products, in GFLOP (2mkn each)."""
    return sum(2 * m * k * n * count for m, k, n, count in products) / 1e9


def matmul_rate(m, k, n):
    """GFLOP/s of a float32 `(m, k)` by `(k, n)` matmul on this backend
    (`keras.ops.matmul` on backend tensors, eagerly): the median of
    `MATMUL_TIMINGS` timings of bursts of calls lasting at least
    `MATMUL_BURST_SECONDS`, each burst ended by reading one result."""
    import keras
    import numpy as np

    rng = np.random.default_rng(0)
    a = keras.ops.convert_to_tensor(rng.normal(size=(m, k)).astype("float32"))
    b = keras.ops.convert_to_tensor(rng.normal(size=(k, n)).astype("float32"))

    def burst(calls):
        start = time.perf_counter()
        for _ in range(calls):
            out = keras.ops.matmul(a, b)
        keras.ops.convert_to_numpy(out)
        return time.perf_counter() - start

    burst(2)  # warm-up (JAX compiles the shape)
    calls = 1
    while burst(calls) < MATMUL_BURST_SECONDS:
        calls *= 2
    seconds = statistics.median(burst(calls) for _ in range(MATMUL_TIMINGS))
    return 2 * m * k * n * calls / seconds / 1e9


def matmul_bound(cfg, mode, rates=None):
    """The matmul bound of each layer's step at `cfg`: `{layer:
    (gflop, bound_seconds)}`, the bound being the time its matmuls alone
    take at the rate this backend reaches at their shapes (`matmul_rate`,
    cached in `rates`), and `rates` itself (`{(m, k, n): GFLOP/s}`, the
    large square matmul's included)."""
    rates = {} if rates is None else rates
    bounds = {}
    for layer in ("onlstm", "keras_lstm"):
        products = step_matmuls(cfg, layer, mode)
        seconds = 0.0
        for m, k, n, count in products:
            if (m, k, n) not in rates:
                rates[m, k, n] = matmul_rate(m, k, n)
            seconds += 2 * m * k * n * count / 1e9 / rates[m, k, n]
        bounds[layer] = (matmul_gflop(products), seconds)
    square = (LARGE_MATMUL,) * 3
    if square not in rates:
        rates[square] = matmul_rate(*square)
    return bounds, rates


def time_interleaved(steps, n, warmup, stat=statistics.median,
                     cpu_times=None):
    """`stat` (median) seconds per call of each function, timed
    round-robin after `warmup` calls each. `cpu_times`, a dict, if given,
    receives the same statistic of the process's CPU time per call (all
    threads)."""
    for fn in steps.values():
        for _ in range(warmup):
            fn()
    times = {name: [] for name in steps}
    cpu = {name: [] for name in steps}
    for _ in range(n):
        for name, fn in steps.items():
            start, cpu_start = time.perf_counter(), time.process_time()
            fn()
            times[name].append(time.perf_counter() - start)
            cpu[name].append(time.process_time() - cpu_start)
    if stat is None:
        return times
    if cpu_times is not None:
        cpu_times.update({name: stat(t) for name, t in cpu.items()})
    return {name: stat(t) for name, t in times.items()}


def run_torch(args):
    rows = []
    for name in args.configs.split(","):
        times = time_interleaved(
            {"torch_lstm": torch_step_fn(CONFIGS[name], args.forward_only)},
            args.steps,
            args.warmup, stat=None,
        )["torch_lstm"]
        row = {
            "config": name,
            "torch_lstm_ms": 1000 * statistics.median(times),
            "torch_lstm_min_ms": 1000 * min(times),
            "torch_device": _torch_device_name(),
        }
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def run_here(args):
    import keras

    backend = keras.backend.backend()
    if args.breakdown and backend == "torch":
        raise SystemExit(
            "--breakdown: ONLSTM has no fused recurrence on the torch "
            "backend (it steps through its cell there); received "
            "KERAS_BACKEND=torch")
    if backend == "tensorflow":
        jit_modes = TF_JIT_MODES[args.jit]
    elif backend == "torch":
        # `jit_compile=True` would be torch.compile, which Keras' own
        # "auto" leaves off: time the layers as a user gets them.
        jit_modes = [False]
    else:
        jit_modes = [True]
    stand_ins = breakdown_recurrences() if args.breakdown else {}
    keras.config.set_dtype_policy(args.dtype_policy)
    rows, rates = [], {}
    for name in args.configs.split(","):
        cfg = CONFIGS[name]
        _, _, _, units, chunk = cfg
        for jit in jit_modes:
            layers = compared_layers(units, chunk)
            steps = {key: keras_step_fn(make, cfg, jit, args.forward_only)
                     for key, make in layers.items()}
            for key, cls in stand_ins.items():
                step = keras_step_fn(layers["onlstm"], cfg, jit,
                                     args.forward_only)
                with fused_recurrence_class(cls):
                    step()  # traced (and compiled) with the stand-in
                steps[key] = step
            cpu = {}
            medians = time_interleaved(steps, args.steps, args.warmup,
                                       cpu_times=cpu)
            row = {
                "backend": backend,
                "config": name,
                "shape": list(cfg),
                "jit": jit,
                "steps": args.steps,
                "mode": "forward" if args.forward_only else "train",
                "dtype_policy": args.dtype_policy,
            }
            row.update({k + "_ms": 1000 * v for k, v in medians.items()})
            row.update({k + "_cpu_ms": 1000 * v for k, v in cpu.items()})
            # The matmul bound, timed in the same process after the steps.
            bounds, rates = matmul_bound(cfg, row["mode"], rates)
            for key, (gflop, seconds) in bounds.items():
                row[key + "_matmul_gflop"] = gflop
                row[key + "_bound_ms"] = 1000 * seconds
            shapes = sorted({p[:3] for key in bounds
                             for p in step_matmuls(cfg, key, row["mode"])})
            row["step_matmul_gflops"] = {
                "x".join(map(str, shape)): rates[shape] for shape in shapes}
            row["large_matmul_gflops"] = rates[(LARGE_MATMUL,) * 3]
            rows.append(row)
            if args.json:
                print(json.dumps(row), flush=True)
            else:
                print(format_row(row), flush=True)
    return rows


# Sentence lengths of the random parse workload, in words: a fixed spread
# from 2 to 40 words (mean about 14), close to the treebanks' dev samples.
PARSE_LENGTHS = (2, 40)


def parse_workload(args, vocab):
    """The sentences to parse: a treebank's, or random ones of `vocab`."""
    import numpy as np

    if args.treebank:
        from on_lstm_keras import parsing

        load = parsing.load_ptb if args.treebank == "ptb" else parsing.load_sinica
        gold = load(nltk_data=args.nltk_data)
        return [g.words for g in gold if len(g.words) >= 2]
    rng = np.random.default_rng(0)
    low, high = PARSE_LENGTHS
    lengths = np.clip(rng.gamma(2.0, 7.0, size=args.sentences).astype(int),
                      low, high)
    from on_lstm_keras.data.vocabulary import SPECIALS

    words = [w for w in vocab.words if w not in SPECIALS]
    return [[words[i] for i in rng.integers(0, len(words), size=n)]
            for n in lengths]


def random_run():
    """A language model of the `small` preset's size with random weights,
    and a vocabulary of its size."""
    from on_lstm_keras.config import PRESETS
    from on_lstm_keras.data.vocabulary import Vocabulary
    from on_lstm_keras.models import ONLSTMLanguageModel

    model_config, training_config = PRESETS["small"]
    size = training_config.max_vocab
    vocab = Vocabulary.build([["w%d" % i for i in range(size - 3)]])
    model = ONLSTMLanguageModel.from_model_config(model_config, len(vocab))
    return model, vocab


def run_parse(args):
    """Sentences per second of the parser, and the model's share of it."""
    import keras

    from on_lstm_keras.parsing import model_parser

    print_environment(backend_environment())
    if args.model:
        from on_lstm_keras.models.saving import load_run

        run = load_run(args.model)
        model, vocab, what = run.model, run.vocab, "run %s" % args.model
    else:
        model, vocab = random_run()
        what = "random weights, small preset size"
    sentences = parse_workload(args, vocab)
    words = sum(len(s) for s in sentences)
    model_parser.parse_sentences(model, vocab, sentences[:64])  # warm-up
    # The first pass compiles the model's reader (one function per bucket
    # shape); later passes run the reader kept for the model.
    model_parser._compiled_distances.cache_clear()
    start = time.perf_counter()
    model_parser.sentence_distances(model, vocab, sentences)
    first_s = time.perf_counter() - start
    # The two kinds of pass alternate, so that a slow spell of the machine
    # falls on both; the medians of separate passes can still put the
    # distances above the whole parse by the machine's noise, which the
    # printed share then shows rather than hides.
    times = time_interleaved(
        {"distances": lambda: model_parser.sentence_distances(
            model, vocab, sentences),
         "parse": lambda: model_parser.parse_sentences(
            model, vocab, sentences)},
        args.passes, warmup=0, stat=None)
    total_times = times["parse"]
    model_s = statistics.median(times["distances"])
    total_s = statistics.median(total_times)
    row = {
        "mode": "parse", "backend": keras.backend.backend(), "model": what,
        "sentences": len(sentences), "words": words,
        "seconds": total_s, "sentences_per_s": len(sentences) / total_s,
        "words_per_s": words / total_s,
        "distances_seconds": model_s,
        "distances_share": model_s / total_s, "passes": args.passes,
        "seconds_each_pass": total_times,
        "first_pass_seconds": first_s,
        "first_pass_sentences_per_s": len(sentences) / first_s,
    }
    if args.json:
        print(json.dumps(row), flush=True)
        return row
    print("parse (%s, %s): %d sentences, %d words in %.1f s (median of %d "
          "passes, %s s): %.0f sentences/s, %.0f words/s; distances alone "
          "%.1f s (%.0f%% of the time); the first pass, compiling the "
          "reader: distances in %.1f s, %.0f sentences/s" % (
              row["backend"], what, len(sentences), words, total_s,
              args.passes, " / ".join("%.1f" % t for t in total_times),
              row["sentences_per_s"], row["words_per_s"], model_s,
              100 * row["distances_share"], first_s,
              row["first_pass_sentences_per_s"]))
    return row


def length_spread(time_steps, n=LENGTHS):
    """`n` different lengths spread evenly over half to one and a half
    times `time_steps` (their mean is about `time_steps`)."""
    import numpy as np

    lengths = np.linspace(time_steps / 2, 3 * time_steps / 2, n)
    lengths = sorted({max(1, int(round(v))) for v in lengths})
    if len(lengths) < n:
        raise ValueError(f"{n} different lengths need time steps of at "
                         f"least {n}, received {time_steps}")
    return lengths


def lengths_row(name, cfg):
    """`--lengths` for one config: first-pass and compiled seconds of
    `predict_on_batch` over batches of many lengths and of one length, for
    both layers, each on a model built fresh."""
    import keras
    import numpy as np

    batch, time_steps, features, units, chunk = cfg
    lengths = length_spread(time_steps)
    rng = np.random.default_rng(0)
    inputs = {
        "one": [rng.normal(size=(batch, time_steps, features))
                for _ in lengths],
        "many": [rng.normal(size=(batch, n, features)) for n in lengths],
    }
    inputs = {k: [keras.ops.convert_to_tensor(x.astype("float32"))
                  for x in xs] for k, xs in inputs.items()}
    row = {"mode": "lengths", "backend": keras.backend.backend(),
           "config": name, "lengths": lengths}
    for key, factory in compared_layers(units, chunk).items():
        for kind in ("one", "many"):
            model = keras.Sequential([keras.Input((None, features)),
                                      factory()])
            passes = []
            for _ in range(2):
                start = time.perf_counter()
                for x in inputs[kind]:
                    model.predict_on_batch(x)
                passes.append(time.perf_counter() - start)
            row[f"{key}_{kind}_first_s"], row[f"{key}_{kind}_s"] = passes
        row[f"{key}_lengths_ratio"] = (row[f"{key}_many_first_s"]
                                       / row[f"{key}_one_first_s"])
    return row


def run_lengths(args):
    """The `--lengths` rows of each config, printed."""
    rows = []
    print_environment(backend_environment())
    for name in args.configs.split(","):
        row = lengths_row(name, CONFIGS[name])
        rows.append(row)
        if args.json:
            print(json.dumps(row), flush=True)
            continue
        for key, label in (("onlstm", "ONLSTM"), ("keras_lstm", "keras LSTM")):
            print("%-10s %-5s %d batches of %d lengths / of one: %-10s "
                  "%.2f s / %.2f s = %.2f (compiled: %.2f s / %.2f s)" % (
                      row["backend"], name, LENGTHS, LENGTHS, label,
                      row[f"{key}_many_first_s"], row[f"{key}_one_first_s"],
                      row[f"{key}_lengths_ratio"], row[f"{key}_many_s"],
                      row[f"{key}_one_s"]), flush=True)
    if not args.json:
        print("Target: ONLSTM's ratio <= %.1f." % TARGET_LENGTHS)
    return rows


def format_row(r, torch_ms=None):
    text = (
        "%-10s %-5s %-7s XLA=%-3s  ONLSTM %7.1f ms   keras LSTM %7.1f ms   "
        "ONLSTM/keras LSTM = %.2f" % (
            r["backend"], r["config"], r.get("mode", "train"),
            "yes" if r["jit"] else "no",
            r["onlstm_ms"], r["keras_lstm_ms"],
            r["onlstm_ms"] / r["keras_lstm_ms"],
        )
    )
    if r.get("dtype_policy", "float32") != "float32":
        text += "   (%s)" % r["dtype_policy"]
    if "onlstm_cpu_ms" in r:
        text += "   (CPU time %.1f / %.1f ms)" % (
            r["onlstm_cpu_ms"], r["keras_lstm_cpu_ms"])
    if "onlstm_bound_ms" in r:
        text += ("   matmul bound: ONLSTM %.1f GFLOP in %.1f ms (step at %.0f%%"
                 " of it), keras LSTM %.1f GFLOP in %.1f ms (%.0f%%); %dx%dx%d"
                 " matmul %.0f GFLOP/s" % (
                     r["onlstm_matmul_gflop"], r["onlstm_bound_ms"],
                     100 * r["onlstm_bound_ms"] / r["onlstm_ms"],
                     r["keras_lstm_matmul_gflop"], r["keras_lstm_bound_ms"],
                     100 * r["keras_lstm_bound_ms"] / r["keras_lstm_ms"],
                     LARGE_MATMUL, LARGE_MATMUL, LARGE_MATMUL,
                     r["large_matmul_gflops"]))
    if "loop_lstm_cell_ms" in r:
        text += ("   LSTM cell in ONLSTM's loop: %.1f ms (%.2f), with "
                 "ON-LSTM's matmul: %.1f ms (%.2f)" % (
                     r["loop_lstm_cell_ms"],
                     r["loop_lstm_cell_ms"] / r["keras_lstm_ms"],
                     r["loop_lstm_cell_wide_ms"],
                     r["loop_lstm_cell_wide_ms"] / r["keras_lstm_ms"]))
    if torch_ms:
        text += "   ONLSTM/torch = %.2f" % (r["onlstm_ms"] / torch_ms)
    return text


def print_table(rows, torch_ms):
    """`torch_ms`: config name -> torch.nn.LSTM median ms (may be empty)."""
    print()
    head = ("| backend | config | step | XLA | ONLSTM ms | keras LSTM ms "
            "| ONLSTM / keras LSTM |")
    rule = "|---|---|---|---|---:|---:|---:|"
    breakdown = any("loop_lstm_cell_ms" in r for r in rows)
    if breakdown:
        head += (" LSTM cell in ONLSTM's loop / keras LSTM | the same with "
                 "ON-LSTM's matmul / keras LSTM |")
        rule += "---:|---:|"
    bound = any("onlstm_bound_ms" in r for r in rows)
    if bound:
        head += " ONLSTM / its matmul bound | keras LSTM / its bound |"
        rule += "---:|---:|"
    if torch_ms:
        head += " torch LSTM ms | ONLSTM / torch |"
        rule += "---:|---:|"
    print(head)
    print(rule)
    for r in rows:
        line = "| %s | %s | %s | %s | %.1f | %.1f | %.2f |" % (
            r["backend"], r["config"], r.get("mode", "train"),
            "yes" if r["jit"] else "no",
            r["onlstm_ms"], r["keras_lstm_ms"],
            r["onlstm_ms"] / r["keras_lstm_ms"],
        )
        if breakdown:
            line += " %.2f | %.2f |" % (
                r["loop_lstm_cell_ms"] / r["keras_lstm_ms"],
                r["loop_lstm_cell_wide_ms"] / r["keras_lstm_ms"])
        if bound:
            line += " %.0f%% | %.0f%% |" % (
                100 * r["onlstm_bound_ms"] / r["onlstm_ms"],
                100 * r["keras_lstm_bound_ms"] / r["keras_lstm_ms"])
        if torch_ms:
            t = torch_ms.get(r["config"])
            line += " %.1f | %.2f |" % (t, r["onlstm_ms"] / t)
        print(line)
    print()
    print("Targets: ONLSTM / keras LSTM <= %.2f on each backend (the aim "
          "for a forward pass: <= %.1f); ONLSTM on its best backend <= %.1f "
          "x torch.nn.LSTM." % (TARGET_OVER_KERAS, AIM_FORWARD_OVER_KERAS,
                                TARGET_OVER_TORCH))
    for name in CONFIGS:
        mine = [r for r in rows if r["config"] == name]
        if not mine:
            continue
        best = min(mine, key=lambda r: r["onlstm_ms"])
        where = best["backend"]
        if best["backend"] == "tensorflow":
            where += ", XLA" if best["jit"] else ", no XLA"
        text = "%-5s best ONLSTM: %.1f ms (%s)" % (
            name, best["onlstm_ms"], where)
        if name in torch_ms:
            text += "; torch.nn.LSTM %.1f ms; ONLSTM / torch = %.2f" % (
                torch_ms[name], best["onlstm_ms"] / torch_ms[name])
        print(text)


# A kernel's event in TensorFlow's trace is named `node name:OpType`; the
# executor's and functions' events (`ExecutorState::Process`,
# `EagerLocalExecute: __inference_...`) enclose kernels, and would count
# their time twice.
_KERNEL_EVENT = re.compile(r"^[^\s:]+:([A-Za-z_][A-Za-z0-9_]*)$")
# With XLA a step is one kernel named after the compiled function
# (`__inference_one_step_on_data_4352`): reported as `one_step_on_data
# (XLA)`, the same name in both layers' columns.
_COMPILED_FUNCTION = re.compile(r"^__inference_(.+?)_\d+$")
# Work that Eigen's thread pool does for a kernel running on another
# thread (the trace does not say which kernel): its own row.
HELPER_THREADS = "ParallelFor"


def op_times(xspace):
    """`{op type: (milliseconds, calls)}` of the kernels in a TensorFlow
    profiler trace (an `XSpace` proto), summed over the host's threads;
    `HELPER_THREADS` holds Eigen's thread-pool work for kernels running on
    other threads, and an XLA-compiled step is one kernel."""
    totals = {}
    for plane in xspace.planes:
        names = {k: m.name for k, m in plane.event_metadata.items()}
        for line in plane.lines:
            for event in line.events:
                name = names.get(event.metadata_id, "")
                match = _KERNEL_EVENT.match(name)
                if match:
                    op = match.group(1)
                    compiled = _COMPILED_FUNCTION.match(op)
                    if compiled:
                        op = "%s (XLA)" % compiled.group(1)
                elif name == HELPER_THREADS:
                    op = name
                else:
                    continue
                ms, calls = totals.get(op, (0.0, 0))
                totals[op] = (ms + event.duration_ps / 1e9, calls + 1)
    return totals


def profile_step(step, steps, warmup):
    """`op_times` of `steps` calls of `step` (after `warmup` untimed)."""
    import glob

    import tensorflow as tf

    try:
        from tensorflow.tsl.profiler.protobuf import xplane_pb2
    except ImportError as e:  # moved between TensorFlow versions
        raise SystemExit("--profile reads TensorFlow's trace with "
                         "tensorflow.tsl.profiler.protobuf.xplane_pb2, which "
                         "this TensorFlow (%s) lacks: %s" % (tf.__version__, e))
    for _ in range(warmup):
        step()
    with tempfile.TemporaryDirectory() as logdir:
        tf.profiler.experimental.start(logdir)
        try:
            for _ in range(steps):
                step()
        finally:
            tf.profiler.experimental.stop()
        paths = glob.glob(os.path.join(logdir, "**", "*.xplane.pb"),
                          recursive=True)
        if not paths:
            raise SystemExit("--profile: TensorFlow's profiler wrote no trace "
                             "in %s" % logdir)
        xspace = xplane_pb2.XSpace()
        with open(paths[0], "rb") as f:
            xspace.ParseFromString(f.read())
    return op_times(xspace)


def profile_table(per_layer, steps, top):
    """Lines of a Markdown table: each op type's milliseconds and calls per
    step for each layer, the `top` largest by their sum, the rest in one
    row, then the totals."""
    layers = list(per_layer)
    ops_ = sorted(
        {op for times in per_layer.values() for op in times},
        key=lambda op: -sum(per_layer[k].get(op, (0.0, 0))[0]
                            for k in layers))
    head = "| op type | " + " | ".join(
        "%s ms | %s calls" % (k, k) for k in layers) + " |"
    lines = [head, "|---|" + "---:|---:|" * len(layers)]

    def row(label, chosen):
        cells = []
        for k in layers:
            ms = sum(per_layer[k].get(op, (0.0, 0))[0] for op in chosen)
            calls = sum(per_layer[k].get(op, (0.0, 0))[1] for op in chosen)
            cells.append("%.1f | %.0f" % (ms / steps, calls / steps))
        return "| %s | %s |" % (label, " | ".join(cells))

    for op in ops_[:top]:
        lines.append(row(op, [op]))
    if ops_[top:]:
        lines.append(row("%d other op types" % len(ops_[top:]), ops_[top:]))
    lines.append(row("**all kernels**", ops_))
    return lines


def run_profile(args):
    """`--profile`: prints each config's table; returns its rows, each a
    config, `jit`, `mode`, `steps` and `op_times`: `{layer: {op type:
    [milliseconds, calls]}}` summed over the steps (`op_times`' sums)."""
    import keras

    backend = keras.backend.backend()
    if backend != "tensorflow":
        raise SystemExit("--profile reads TensorFlow's profiler: set "
                         "KERAS_BACKEND=tensorflow, received KERAS_BACKEND=%s"
                         % backend)
    print_environment(backend_environment())
    rows = []
    for name in args.configs.split(","):
        cfg = CONFIGS[name]
        _, _, _, units, chunk = cfg
        for jit in TF_JIT_MODES[args.jit]:
            per_layer = {
                LAYER_NAMES[key]: profile_step(
                    keras_step_fn(make, cfg, jit, args.forward_only),
                    args.steps, args.warmup)
                for key, make in compared_layers(units, chunk).items()}
            print("\n%s, %s step, XLA %s: kernel time by op type, ms per step "
                  "summed over threads, and kernels per step (%d profiled "
                  "steps of each layer, one layer after the other)\n" % (
                      name, "forward" if args.forward_only else "training",
                      "yes" if jit else "no", args.steps))
            for line in profile_table(per_layer, args.steps, args.top):
                print(line)
            print(flush=True)
            rows.append({
                "config": name, "jit": jit, "steps": args.steps,
                "mode": "forward" if args.forward_only else "train",
                "op_times": {layer: {op: list(v) for op, v in times.items()}
                             for layer, times in per_layer.items()}})
    return rows


def run_timings(args):
    """The step timings: of each backend of `--backends` in a subprocess
    (their rows relayed), or of this one; then torch's with `--torch`,
    and the table. Returns the figures of a record: the `mode`, the
    `configs` timed, the `rows`, each backend's `environments` (versions,
    threads) and, with `--torch`, `torch_ms` (per config) and
    `torch_devices`."""
    names = args.configs.split(",")
    figures = {"mode": "forward" if args.forward_only else "train",
               "configs": {name: list(CONFIGS[name]) for name in names}}
    if args.torch:
        check_torch()
    rows, environments = [], {}
    if args.backends:
        for backend in args.backends.split(","):
            env = dict(os.environ, KERAS_BACKEND=backend)
            for row in run_child(child_argv(args), env):
                if "environment" in row:
                    environments[backend] = row["environment"]
                    print_environment(row["environment"])
                    continue
                rows.append(row)
                print(format_row(row), flush=True)
    else:
        env = backend_environment()
        environments[env["backend"]] = env
        if args.json:
            print(json.dumps({"environment": env}), flush=True)
        else:
            print_environment(env)
        rows = run_here(args)  # prints its rows (as JSON with --json)
        if args.json:
            return {**figures, "rows": rows, "environments": environments}
    figures.update(rows=rows, environments=environments)
    torch_ms = {}
    if args.torch:
        # On small machines torch's OpenMP threads sometimes stall a whole
        # process (1.5 s steps instead of 16 ms); so torch is timed in
        # TORCH_PROCESSES fresh processes, keeping the lowest median.
        medians, devices = {}, {}
        for _ in range(TORCH_PROCESSES):
            for row in run_child(child_argv(args, torch_only=True),
                                 os.environ):
                medians.setdefault(row["config"], []).append(
                    row["torch_lstm_ms"])
                devices[row["config"]] = row.get("torch_device", "cpu")
        for name, ms in medians.items():
            torch_ms[name] = min(ms)
            print("torch      %-5s torch.nn.LSTM %7.1f ms (lowest median of "
                  "%d processes: %s ms; %s)" % (
                      name, min(ms), len(ms),
                      ", ".join("%.1f" % m for m in ms), devices[name]),
                  flush=True)
        figures.update(torch_ms=torch_ms, torch_devices=devices)
    print_table(rows, torch_ms)
    return figures


def main(argv=None):
    args = parse_args(argv)
    if args.torch_only:
        run_torch(args)
        return
    if not args.json:
        print_environment(environment())
    if args.parse:
        row = run_parse(args)
        figures = {"mode": "parse", "rows": [row], "environments": {
            row["backend"]: backend_environment()}}
    elif args.lengths:
        figures = {"mode": "lengths", "configs": {
            name: list(CONFIGS[name]) for name in args.configs.split(",")},
            "rows": run_lengths(args)}
        figures["environments"] = {
            figures["rows"][0]["backend"]: backend_environment()}
    elif args.profile:
        figures = {"mode": "profile", "configs": {
            name: list(CONFIGS[name]) for name in args.configs.split(",")},
            "rows": run_profile(args),
            "environments": {"tensorflow": backend_environment()}}
    else:
        figures = run_timings(args)
    if args.record:
        from on_lstm_keras import runs

        command = [__file__, *(sys.argv[1:] if argv is None else argv)]
        runs.write_record(args.record, runs.result_record(
            "bench_layer", figures, argv=command))


if __name__ == "__main__":
    main()
