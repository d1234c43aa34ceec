#!/usr/bin/env python3
"""The Perfetto timeline of `trainsim simulate --trace` is valid Chrome trace JSON (complete events with name,
ph, pid, tid, ts, dur; a thread name per GPU) and each GPU's track tiles the simulated time: its events do not
overlap and their durations sum to the iterations (and the checkpoint write, when there is one).

  check_trace.py TRAINSIM OUTDIR [simulate flags...]
"""
import json
import os
import subprocess
import sys


def main():
    trainsim, outdir, flags = sys.argv[1], sys.argv[2], sys.argv[3:]
    os.makedirs(outdir, exist_ok=True)
    path = os.path.join(outdir, "trace_" + str(abs(hash(" ".join(flags))) % 10**8) + ".json")
    run = subprocess.run([trainsim, "simulate", "--format", "json", "--trace", path] + flags, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit("trainsim simulate failed (%d): %s" % (run.returncode, run.stderr))
    result = json.loads(run.stdout)
    with open(path) as f:
        trace = json.load(f)
    events = trace["traceEvents"]
    gpus = result["simulation"]["gpus"]
    named = {e["tid"] for e in events if e.get("ph") == "M" and e.get("name") == "thread_name"}
    if named != set(range(gpus)):
        sys.exit("thread names for %d of %d GPUs" % (len(named), gpus))
    total_us = 1e6 * (sum(result["step"]["iterations_s"]) + result.get("checkpoint", {}).get("write_s", 0.0))
    tracks = {}
    for e in events:
        if e.get("ph") != "X":
            continue
        for key in ("name", "cat", "pid", "tid", "ts", "dur"):
            if key not in e:
                sys.exit("event without %s: %s" % (key, e))
        if not (e["ts"] >= 0 and e["dur"] >= 0):
            sys.exit("negative time: %s" % e)
        tracks.setdefault(e["tid"], []).append(e)
    if set(tracks) != set(range(gpus)):
        sys.exit("events on %d of %d GPU tracks" % (len(tracks), gpus))
    for gpu, track in tracks.items():
        track.sort(key=lambda e: e["ts"])
        end = 0.0
        for e in track:
            if e["ts"] < end - 1e-3:  # microseconds: overlap beyond rounding
                sys.exit("GPU %d: %s at %.3f us starts before the previous event ends (%.3f us)" % (gpu, e["name"], e["ts"], end))
            end = e["ts"] + e["dur"]
        busy = sum(e["dur"] for e in track)
        if abs(busy - total_us) > 1e-6 * total_us:
            sys.exit("GPU %d: events sum to %.3f us, simulated time %.3f us" % (gpu, busy, total_us))
    print("%d GPU tracks, %d events, each summing to %.6f s" % (gpus, sum(len(t) for t in tracks.values()), total_us / 1e6))


if __name__ == "__main__":
    main()
