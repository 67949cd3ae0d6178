"""The solver process that proves deals (server.proving), measured: its resident memory
while it proves sealed candidates of a game, the replacements its bound makes, and the
deals it proves and gives up.

    python bench/proving.py --game easy-harp --candidates 40
    python bench/proving.py --game easy-harp --candidates 40 --rss 100   # a tighter bound

Each candidate is one job of the worker's Prover (nice 10, the server's defaults unless
given), with a winnable tournament round's budget (200,000 nodes). Printed per job: the
verdict, the seconds, the process's resident MB after it and its peak so far (VmHWM, read
from /proc while the job runs: the process is replaced when it passes the bound after a
job); then the totals.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
import time
from pathlib import Path

# Run as a script, this file's folder comes first on sys.path and bench/engine.py would
# shadow the `engine` package (here and in the solver's process, which is given this
# sys.path): drop that entry.
if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
    del sys.path[0]

from engine.fair import TOURNAMENT_NODES
from server.proving.deals import prove_candidate
from server.proving.process import MB, Prover


def peak_mb(pid: int | None) -> float:
    """The process's peak resident MB (VmHWM), 0 when it cannot be read."""
    with contextlib.suppress(OSError, ValueError, TypeError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


async def run(args: argparse.Namespace) -> None:
    prover = Prover(rss_limit=args.rss * MB)
    nodes = args.nodes or TOURNAMENT_NODES[args.game]
    proven = given_up = 0
    highest = 0.0
    try:
        for n in range(args.candidates):
            start = time.monotonic()
            job = asyncio.ensure_future(prover.run(prove_candidate, args.game, nodes))
            peak, pid = 0.0, None
            while not job.done():  # the peak read while the job runs (a replaced process's
                await asyncio.sleep(0.05)  # is gone once the job ends)
                pid = prover.pid or pid
                peak = max(peak, peak_mb(pid))
            code = await job
            highest = max(highest, peak)
            proven += code is not None
            given_up += code is None
            print(
                f"{n:3d} {'proven' if code else 'unknown':8s} {time.monotonic() - start:6.2f} s "
                f"rss {prover.rss / MB:6.1f} MB (0: replaced)  peak {peak:6.1f} MB  "
                f"restarts {prover.restarts}",
                flush=True,
            )
    finally:
        prover.close()
    print(
        f"{args.game}: {proven} proven, {given_up} given up of {args.candidates} "
        f"({nodes} nodes); highest peak {highest:.1f} MB; replaced {prover.restarts} times "
        f"past {args.rss} MB"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--game", default="easy-harp")
    ap.add_argument("--candidates", type=int, default=40)
    ap.add_argument("--nodes", type=int, help="nodes per candidate (a round's budget)")
    ap.add_argument("--rss", type=int, default=150, help="the bound, MB (150)")
    asyncio.run(run(ap.parse_args()))


if __name__ == "__main__":
    main()
