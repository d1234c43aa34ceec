"""The FGD experiment on the Alibaba 2023 trace: jobs never end, the trace repeated until it asks for 130% of the
cluster's GPUs; bin-packing must leave more of the cluster allocated than spreading (Weng et al., ATC'23).
Usage: check_fill.py TRAINSIM POD_LIST_CSV"""
import json
import subprocess
import sys

out = subprocess.run([sys.argv[1], "cluster", "--trace", "alibaba-2023:" + sys.argv[2], "--policy", "priority+binpack,priority+spread",
                      "--fill", "--fill-to", "1.3", "--format", "json"], check=True, capture_output=True, text=True).stdout
p = {x["name"]: x for x in json.loads(out)["policies"]}
pack, spread = p["priority+binpack"]["allocated_at_end"], p["priority+spread"]["allocated_at_end"]
print(f"allocated at the last arrival: binpack {pack:.4f}, spread {spread:.4f}")
if not (0.5 < spread < pack <= 1.0):
    sys.exit("bin-packing does not beat spreading")
