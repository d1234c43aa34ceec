"""Writes slice.csv, the workload the real-Slurm comparison replays: the 30 multi-GPU jobs of the Chronus trace
(../shared/traces/philly-derived-chronus/trace_job_Philly_MIX1.csv) submitted from t = 881 s on, their arrivals
compressed 12x (375 s of arrivals in 31 s) and their durations 150x with a floor of 2 s (90 s to 1 h becomes 2 to
25 s); a job asks one minute of walltime when it runs under 10 s, else two (Slurm's limits are whole minutes;
users ask generously). Rerun to regenerate.
Usage: make_slice.py TRACE_CSV > slice.csv"""
import csv
import sys

rows = [r for r in csv.DictReader(open(sys.argv[1])) if int(r["num_gpu"]) >= 2]
rows.sort(key=lambda r: (int(r["submit_time"]), int(r["job_id"])))
first = next(i for i, r in enumerate(rows) if int(r["submit_time"]) >= 881)
window = rows[first:first + 30]
t0 = int(window[0]["submit_time"])
print("id,submit_s,gpus,duration_s,walltime_s")
for r in window:
    submit = round((int(r["submit_time"]) - t0) / 12)
    duration = max(2, round(int(r["duration"]) / 150))
    walltime = 60 if duration < 10 else 120
    print(f"j{r['job_id']},{submit},{r['num_gpu']},{duration},{walltime}")
