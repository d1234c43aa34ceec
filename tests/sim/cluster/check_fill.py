"""The FGD experiment on the Alibaba 2023 trace: jobs never end, the trace repeated until it asks for 130% of the
cluster's GPUs; bin-packing must leave more of the cluster allocated than spreading (Weng et al., ATC'23).
Also: the time series under --fill has a row per sample up to the last arrival, not one; and the resampled
multigpu50 list, which has no times, is read for --fill (only the pods' order and requests count there).
Usage: check_fill.py TRAINSIM POD_LIST_CSV"""
import csv
import json
import os
import subprocess
import sys
import tempfile

series = os.path.join(tempfile.mkdtemp(), "series.csv")
out = subprocess.run([sys.argv[1], "cluster", "--trace", "alibaba-2023:" + sys.argv[2], "--policy", "priority+binpack,priority+spread",
                      "--fill", "--fill-to", "1.3", "--format", "json", "--timeseries-csv", series], check=True, capture_output=True, text=True).stdout
p = {x["name"]: x for x in json.loads(out)["policies"]}
pack, spread = p["priority+binpack"]["allocated_at_end"], p["priority+spread"]["allocated_at_end"]
print(f"allocated at the last arrival: binpack {pack:.4f}, spread {spread:.4f}")
if not (0.5 < spread < pack <= 1.0):
    sys.exit("bin-packing does not beat spreading")

with open(series) as f:
    rows = [r for r in csv.DictReader(f) if r["policy"] == "priority+binpack"]
print(f"time-series rows under --fill: {len(rows)}")
if len(rows) < 100:
    sys.exit("the --fill time series stops after its first rows")
# The allocation rises as the pods arrive (they never leave).
if not float(rows[-1]["allocated_gpus"]) > float(rows[0]["allocated_gpus"]):
    sys.exit("the --fill time series does not follow the allocation")

multi = os.path.join(os.path.dirname(sys.argv[2]), "openb_pod_list_multigpu50.csv")
if os.path.exists(multi):
    out = subprocess.run([sys.argv[1], "cluster", "--trace", "alibaba-2023:" + multi, "--policy", "priority+binpack", "--fill", "--format", "json"],
                         check=True, capture_output=True, text=True).stdout
    run = json.loads(out)
    print(f"multigpu50 under --fill: {run['workload']['jobs']} jobs, allocated {run['policies'][0]['allocated_at_end']:.4f}")
    if run["workload"]["jobs"] != 7973 or not 0 < run["policies"][0]["allocated_at_end"] <= 1:
        sys.exit("the multigpu50 list is not read for --fill")
