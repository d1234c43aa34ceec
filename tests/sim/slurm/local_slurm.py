"""A real Slurm on this machine for the tests: Debian's slurm-wlm, one slurmctld and NODES slurmd started from their own
folder on their own ports (auth/none, cred/none: one machine, no munge), and stopped by PID. Used by the cluster
replay (check_slurm_replay.py) and the sweep's job-array test (tests/sweep/check_sweep_slurm.py)."""
import getpass
import os
import shutil
import signal
import subprocess
import time

NODES, CPUS = 4, 8
# Each node's memory as Slurm sees it: select/cons_tres with CR_CPU does not consume it, but a job asking --mem
# more than a node has is refused.
REAL_MEMORY_MB = 16384


def which_all(names):
    return all(shutil.which(n) for n in names)


def slurm_conf(root, scheduler, ctld_port, node_port):
    user = getpass.getuser()
    return f"""ClusterName=trainsim{ctld_port}
SlurmctldHost=localhost
SlurmctldPort={ctld_port}
SlurmdPort={node_port}
AuthType=auth/none
CredType=cred/none
SlurmUser={user}
SlurmdUser={user}
StateSaveLocation={root}/state
SlurmdSpoolDir={root}/spool/%n
SlurmctldPidFile={root}/slurmctld.pid
SlurmdPidFile={root}/slurmd-%n.pid
SlurmctldLogFile={root}/slurmctld.log
SlurmdLogFile={root}/slurmd-%n.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc={root}/jobcomp.txt
SwitchType=switch/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/{scheduler}
SchedulerParameters=bf_interval=1,bf_resolution=1
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
MinJobAge=3600
KillWait=5
NodeName=n[1-{NODES}] NodeHostname=localhost Port=[{node_port + 1}-{node_port + NODES}] CPUs={CPUS} RealMemory={REAL_MEMORY_MB} State=UNKNOWN
PartitionName=main Nodes=n[1-{NODES}] Default=YES MaxTime=INFINITE State=UP
"""


class Slurm:
    """One slurmctld and NODES slurmd, in `root`, started and stopped by PID."""

    def __init__(self, root, scheduler, ctld_port, node_port):
        self.root, self.procs = root, []
        for d in ("state", "spool"):
            os.makedirs(os.path.join(root, d), exist_ok=True)
        self.conf = os.path.join(root, "slurm.conf")
        with open(self.conf, "w") as f:
            f.write(slurm_conf(root, scheduler, ctld_port, node_port))
        self.env = dict(os.environ, SLURM_CONF=self.conf)

    def start(self):
        self.procs.append(subprocess.Popen(["slurmctld", "-D", "-c", "-f", self.conf], env=self.env,
                                           stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT))
        time.sleep(1)
        for n in range(1, NODES + 1):
            os.makedirs(os.path.join(self.root, "spool", f"n{n}"), exist_ok=True)
            self.procs.append(subprocess.Popen(["slurmd", "-D", "-N", f"n{n}", "-f", self.conf], env=self.env,
                                               stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT))
        deadline = time.time() + 60
        while time.time() < deadline:
            out = self.run(["sinfo", "-h", "-o", "%T %D"], check=False)
            if out.strip() == f"idle {NODES}":
                return
            time.sleep(0.5)
        raise RuntimeError(f"Slurm in {self.root} did not bring {NODES} nodes up: sinfo says {out!r}")

    def stop(self):
        for p in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    def run(self, cmd, check=True):
        r = subprocess.run(cmd, env=self.env, capture_output=True, text=True, timeout=30)
        if check and r.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)}: {r.stderr.strip()}")
        return r.stdout

