#!/usr/bin/env python3
"""`trainsim export` launches what was priced: the framework a target runs, the accelerator vendor's stack, and the
model and run settings the plan was priced with.

  check_priced_stacks.py --trainsim BIN

Each check compares the files against a value derived on another route: `trainsim estimate` of the same scenario with
the target's framework set (the re-priced figures and the memory verdict), the scenario's own numbers, the model's
Hugging Face config.json values (DeepSeek-V3, Qwen3), or the vendor's published names (device plugin resources, the
collectives library's variables).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

import yaml

import upstream_interfaces as upstream
from launch_files import Failure, bash_array, check, flags

HERE = os.path.dirname(os.path.abspath(__file__))
PLANS = os.path.join(HERE, "plans")
CLI = os.path.join(HERE, "..", "cli")


def run(cmd, expect=0):
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if expect is not None and proc.returncode != expect:
        raise Failure(f"{' '.join(cmd)}: exit {proc.returncode}, expected {expect}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return proc


def export(trainsim, plan, target, tmp, expect=0, extra=()):
    """{file name: content} that `trainsim export --to target` writes, and its stderr."""
    out = os.path.join(tmp, f"{os.path.basename(plan)}-{target}-{len(extra)}")
    proc = run([trainsim, "export", plan, "--to", target, "-o", out, *extra], expect=expect)
    if expect != 0:
        check(not os.path.exists(out), f"{target}: refused but wrote {out}")
        return {}, proc.stderr
    files = {}
    for name in sorted(os.listdir(out)):
        with open(os.path.join(out, name)) as f:
            files[name] = f.read()
    return files, proc.stderr


def estimate(trainsim, plan, framework=None):
    doc_path = plan
    if framework:
        with open(plan) as f:
            doc = json.load(f)
        doc["training"]["framework"] = framework
        doc_path = plan + f".{framework}.json"
        with open(doc_path, "w") as f:
            json.dump(doc, f)
    proc = run([trainsim, "estimate", doc_path, "--format", "json"], expect=None)
    if framework:
        os.remove(doc_path)
    return json.loads(proc.stdout) if proc.returncode == 0 else None


def priced_line(text):
    m = re.search(r"Predicted by trainsim for ([\w-]+): step [^,]*, MFU ([\d.]+)%", text)
    check(m, "no 'Predicted by trainsim for ...' header")
    return m.group(1), float(m.group(2))


def manifest(text):
    return {d["kind"]: d for d in yaml.safe_load_all(text) if d}


# ---- The framework a target runs ------------------------------------------------------------------

def framework_checks(trainsim, tmp):
    zero2 = os.path.join(PLANS, "llama8b_sft_16xh100_zero2.json")
    # Megatron-Core prices ZeRO-2 at tp 1 within an H100; DeepSpeed with transformers' eager modules keeps more activations
    # (the estimate under deepspeed says it does not fit): --to deepspeed is refused with the layout that would fit.
    own = estimate(trainsim, zero2)
    ds = estimate(trainsim, zero2, "deepspeed")
    check(own["memory"]["fits"] and own["framework"]["name"] == "megatron-core", "the zero2 plan fits under its implied megatron-core")
    check(ds is not None and not ds["memory"]["fits"], "estimate under deepspeed: the zero2 plan should not fit")
    _, err = export(trainsim, zero2, "deepspeed", tmp, expect=2)
    check(re.search(r'--to: got "deepspeed"; expected a target this layout fits under \(deepspeed runs deepspeed\)', err), err)
    check(re.search(r"under deepspeed it needs [\d.]+ GiB of the [\d.]+ GiB", err), err)
    check(re.search(r"the fastest layout that fits is tp\d+ pp\d+ dp\d+, ZeRO \d, micro-batch \d+.*trainsim plan \S+ --framework deepspeed --gpus 16", err), err)
    print("ok  zero2 plan refused by --to deepspeed:", err.strip()[:200])

    # An FSDP2 plan exported to Megatron-LM is priced again as Megatron-Core: the figures `estimate` gives under megatron-core.
    fsdp2 = os.path.join(PLANS, "llama8b_sft_16xh100_zero3_fsdp2.json")
    mc = estimate(trainsim, fsdp2, "megatron-core")
    files, err = export(trainsim, fsdp2, "megatron", tmp)
    fw, mfu = priced_line(files["pretrain_gpt.sh"])
    check(fw == "megatron-core" and abs(mfu - 100 * mc["step"]["mfu"]) < 0.051, f"megatron export priced {fw} {mfu}%, estimate {100 * mc['step']['mfu']:.1f}%")
    check("Re-evaluated for megatron-core: the plan was priced for fsdp2" in files["pretrain_gpt.sh"], "re-evaluation not stated")
    check(re.search(r"^note: --to megatron runs megatron-core, not the plan's fsdp2", err, re.M), f"no note on stderr: {err}")
    print(f"ok  fsdp2 plan --to megatron: re-priced as megatron-core, MFU {mfu}%")

    # A DeepSpeed plan under a scheduler launches DeepSpeed (train.py + ds_config.json), priced as DeepSpeed.
    dsplan = os.path.join(PLANS, "llama8b_sft_16xh100_deepspeed.json")
    own = estimate(trainsim, dsplan)
    hidden = own["scenario"]["model"]["hidden_size"]
    for target in ("slurm", "torchrun", "volcano", "kubeflow"):
        files, _ = export(trainsim, dsplan, target, tmp)
        text = "".join(files.values())
        check("pretrain_gpt.py" not in text, f"{target}: a DeepSpeed plan launches Megatron-LM")
        fw, mfu = priced_line(text)
        check(fw == "deepspeed" and abs(mfu - 100 * own["step"]["mfu"]) < 0.051, f"{target}: priced {fw} {mfu}%")
        if target in ("slurm", "torchrun"):
            main = files["train.sbatch" if target == "slurm" else "launch_torchrun.sh"]
            check(re.search(r'^  "\$\{TRAIN_SCRIPT:-train\.py\}" "\$\{DEEPSPEED_ARGS\[@\]\}"', main, re.M), f"{target}: does not run train.py")
            ds_config = json.loads(files["ds_config.json"])
        else:
            docs = manifest(files[next(iter(files))])
            check("ConfigMap" in docs, f"{target}: no ConfigMap with ds_config.json")
            ds_config = json.loads(docs["ConfigMap"]["data"]["ds_config.json"])
            job = docs["Job" if target == "volcano" else "PyTorchJob"]
            (upstream.check_volcano_job if target == "volcano" else upstream.check_pytorchjob)(job, target)
            pod = (job["spec"]["tasks"][0] if target == "volcano" else job["spec"]["pytorchReplicaSpecs"]["Master"])["template"]["spec"]
            check(pod["volumes"][-1]["configMap"]["name"] == docs["ConfigMap"]["metadata"]["name"], f"{target}: the ConfigMap is not mounted")
            check(pod["containers"][0]["volumeMounts"][-1]["mountPath"] == "/etc/trainsim", f"{target}: config not at /etc/trainsim")
            check('"${DEEPSPEED_ARGS[@]}"' in pod["containers"][0]["args"][0], f"{target}: container does not run the DeepSpeed program")
        upstream.check_deepspeed_config(ds_config, f"{target} ds_config.json")
        zero = ds_config["zero_optimization"]
        # The deepspeed preset prices transformers' "auto" buckets: hidden_size² and 0.9 hidden_size² (integrations/deepspeed.py).
        check(zero["stage"] == 3 and zero["reduce_bucket_size"] == hidden * hidden and zero["stage3_prefetch_bucket_size"] == int(0.9 * hidden * hidden),
              f"{target}: ZeRO-3 buckets {zero}")
        check(ds_config["train_batch_size"] == 32 and ds_config["train_micro_batch_size_per_gpu"] == 2, f"{target}: batch")
        print(f"ok  deepspeed plan --to {target}: launches DeepSpeed, buckets {zero['reduce_bucket_size']}/{zero['stage3_prefetch_bucket_size']}")


# ---- The accelerator vendor's stack ----------------------------------------------------------------

def vendor_checks(trainsim, tmp):
    ascend = os.path.join(PLANS, "llama8b_pretrain_16xascend_deepspeed.json")
    for target in ("volcano", "kubeflow", "slurm"):
        files, _ = export(trainsim, ascend, target, tmp)
        text = "".join(files.values())
        # Ascend: the mind-cluster device plugin's resource, HCCL, CANN's environment, DeepSpeed on torch_npu.
        for word in ("nvidia.com/gpu", "NCCL", "nvcr.io", "CUDA_VISIBLE"):
            check(word not in text, f"Ascend {target}: names {word}")
        check("HCCL" in text and "source /usr/local/Ascend/ascend-toolkit/set_env.sh" in text, f"Ascend {target}: no HCCL / CANN setup")
        check("export DS_ACCELERATOR=npu" in text, f"Ascend {target}: DeepSpeed not told to use the NPUs")
        if target == "slurm":
            check(re.search(r"^#SBATCH --gres=npu:8$", files["train.sbatch"], re.M), "Ascend slurm: --gres=npu:8")
            check(re.search(r"^# export HCCL_SOCKET_IFNAME=", files["train.sbatch"], re.M), "Ascend slurm: HCCL_SOCKET_IFNAME")
        else:
            docs = manifest(text)
            job = docs["Job" if target == "volcano" else "PyTorchJob"]
            pods = [t["template"] for t in job["spec"]["tasks"]] if target == "volcano" else [r["template"] for r in job["spec"]["pytorchReplicaSpecs"].values()]
            for pod in pods:
                c = pod["spec"]["containers"][0]
                check(c["resources"]["limits"] == {"huawei.com/Ascend910": 8}, f"Ascend {target}: limits {c['resources']['limits']}")
                check("cann" in c["image"] and "torch-npu" in c["image"], f"Ascend {target}: image {c['image']}")
        print(f"ok  Ascend DeepSpeed plan --to {target}: huawei.com/Ascend910, HCCL, CANN, DS_ACCELERATOR=npu")
    files, _ = export(trainsim, os.path.join(PLANS, "llama70b_pretrain_32xascend_megatron.json"), "megatron", tmp)
    check('MEGATRON_DIR="${MEGATRON_DIR:-/workspace/MindSpeed-LLM}"' in files["pretrain_gpt.sh"], "Ascend megatron: MindSpeed-LLM")
    print("ok  Ascend Megatron plan --to megatron: MindSpeed-LLM")

    amd = os.path.join(PLANS, "qwen3_30b_a3b_sft_16xmi300x_megatron.json")
    files, _ = export(trainsim, amd, "kubeflow", tmp)
    job = manifest(files["pytorchjob.yaml"])["PyTorchJob"]
    upstream.check_pytorchjob(job, "AMD kubeflow")
    for role, r in job["spec"]["pytorchReplicaSpecs"].items():
        c = r["template"]["spec"]["containers"][0]
        check(c["resources"]["limits"] == {"amd.com/gpu": 8} and c["image"].startswith("rocm/"), f"AMD {role}: {c['resources']} {c['image']}")
    check("nvidia.com" not in files["pytorchjob.yaml"] and "# export NCCL_IB_HCA=" in files["pytorchjob.yaml"], "AMD kubeflow: RCCL's NCCL_* settings")
    files, _ = export(trainsim, amd, "slurm", tmp)
    sb = files["train.sbatch"]
    check(re.search(r"^#SBATCH --gpus-per-node=8$", sb, re.M) and "RCCL" in sb and re.search(r"^# export NCCL_IB_HCA=", sb, re.M),
          "AMD slurm: --gpus-per-node, RCCL reading NCCL_IB_HCA")
    print("ok  AMD Megatron plan: amd.com/gpu, ROCm image, RCCL")


# ---- Elastic plans and RDMA devices on Kubernetes ------------------------------------------------------

def elastic_checks(trainsim, tmp):
    # tp 2 x dp 16 on 4 nodes of 8, elastic down to half its replicas: dp 8 x tp 2 = 16 GPUs = 2 nodes.
    plan = os.path.join(PLANS, "llama8b_pretrain_32xh100_elastic.json")
    rdma = ["--rdma-resource", "rdma/rdma_shared_device_a=1", "--rdma-resource", "nvidia.com/hostdev"]
    files, _ = export(trainsim, plan, "kubeflow", tmp, extra=rdma)
    text = files["pytorchjob.yaml"]
    job = manifest(text)["PyTorchJob"]
    upstream.check_pytorchjob(job, "elastic kubeflow")
    s = job["spec"]
    e = s["elasticPolicy"]
    check(e["rdzvBackend"] == "c10d" and e["minReplicas"] == 2 and e["maxReplicas"] == 4, f"elasticPolicy {e}")
    check(e["maxRestarts"] >= 2 and e["maxRestarts"] % 2 == 0, f"maxRestarts {e['maxRestarts']}: a shrink and a regrowth per failure")
    check(list(s["pytorchReplicaSpecs"]) == ["Worker"] and s["pytorchReplicaSpecs"]["Worker"]["replicas"] == 4, "elastic: Workers only, all 4")
    check(s["runPolicy"]["schedulingPolicy"]["minAvailable"] == 2, "elastic: the gang is the smallest size")
    c = s["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]
    # kubeflow/training-operator elastic.go: the rendezvous port is read from the Worker's port named pytorchjob-port.
    check({"name": "pytorchjob-port", "containerPort": 29400} in c["ports"], f"ports {c.get('ports')}")
    args = c["args"][0]
    for want in ('--nnodes "$PET_NNODES"', '--rdzv-backend c10d', '--rdzv-endpoint "$PET_RDZV_ENDPOINT"', '--max-restarts "$PET_MAX_RESTARTS"'):
        check(want in args, f"elastic torchrun: {want}")
    check("--node-rank" not in args and "--master-addr" not in args, "elastic torchrun: no fixed node rank")
    check(c["resources"]["limits"] == {"nvidia.com/gpu": 8, "rdma/rdma_shared_device_a": 1, "nvidia.com/hostdev": 1},
          f"limits {c['resources']['limits']}")
    check(c["securityContext"]["capabilities"]["add"] == ["IPC_LOCK"], "RDMA: IPC_LOCK")
    files, _ = export(trainsim, plan, "volcano", tmp)
    job = manifest(files["volcano-job.yaml"])["Job"]
    upstream.check_volcano_job(job, "elastic volcano")
    check(job["spec"]["minAvailable"] == 4 and "--to kubeflow writes an elastic launch" in files["volcano-job.yaml"], "volcano: full size, says so")
    # A fixed plan keeps Master + Workers and no elasticPolicy.
    files, _ = export(trainsim, os.path.join(PLANS, "llama8b_sft_16xh100_zero2.json"), "kubeflow", tmp)
    check("elasticPolicy" not in manifest(files["pytorchjob.yaml"])["PyTorchJob"]["spec"], "fixed plan: no elasticPolicy")
    for bad, why in (("rdma_shared_device_a", "DOMAIN/NAME"), ("rdma/x=0", "1 to 1024"), ("Rdma/x", "lowercase"), ("rdma/x y", "at most 63")):
        _, err = export(trainsim, plan, "kubeflow", tmp, expect=2, extra=["--rdma-resource", bad])
        check("--rdma-resource" in err and why in err, f"--rdma-resource {bad}: {err}")
    print("ok  elastic plan --to kubeflow: elasticPolicy 2..4 nodes, c10d rendezvous on pytorchjob-port, RDMA limits + IPC_LOCK")


# ---- The model and run settings as priced -------------------------------------------------------------

def checked_megatron_flags(trainsim, plan, tmp):
    """The Megatron flags `export --to megatron` writes for `plan`, checked against Megatron's own parser snapshot."""
    files, _ = export(trainsim, plan, "megatron", tmp)
    words = bash_array(files["pretrain_gpt.sh"], "MEGATRON_ARGS")
    upstream.check_megatron_args(words, f"{os.path.basename(plan)} pretrain_gpt.sh")
    return flags(words)


def megatron_flag_checks(trainsim, tmp):
    # DeepSeek-V3's config.json: scoring_func sigmoid, n_group 8, topk_group 4, routed_scaling_factor 2.5, topk_method
    # noaux_tc, rms_norm_eps 1e-6; Megatron-Core runs its experts as grouped GEMMs and cuDNN fused attention on Hopper.
    files, _ = export(trainsim, os.path.join(CLI, "deepseek_v3_mla.json"), "megatron", tmp)
    words = bash_array(files["pretrain_gpt.sh"], "MEGATRON_ARGS")
    upstream.check_megatron_args(words, "deepseek-v3 pretrain_gpt.sh")
    a = flags(words)
    want = {"--moe-router-score-function": "sigmoid", "--moe-router-num-groups": "8", "--moe-router-group-topk": "4",
            "--moe-router-topk-scaling-factor": "2.5", "--moe-router-enable-expert-bias": True, "--moe-grouped-gemm": True,
            "--norm-epsilon": "1e-06", "--attention-backend": "fused"}
    for k, v in want.items():
        check(a.get(k) == v, f"deepseek-v3: {k} = {a.get(k)!r}, expected {v!r}")
    check("--moe-router-pre-softmax" not in a and "--use-flash-attn" not in a, "deepseek-v3: pre-softmax / --use-flash-attn")
    # Steps between checkpoints: the interval the sbatch comment states ("checkpoint C every I"), in steps of the step time.
    files, _ = export(trainsim, os.path.join(CLI, "deepseek_v3_mla.json"), "slurm", tmp)
    sb = files["train.sbatch"]
    a = flags(bash_array(sb, "MEGATRON_ARGS"))
    est = estimate(trainsim, os.path.join(CLI, "deepseek_v3_mla.json"))
    m = re.search(r"checkpoint [^,]* every ([\d.]+) (s|min|h)\b", sb)
    check(m, "sbatch does not state the checkpoint interval")
    interval = float(m.group(1)) * {"s": 1, "min": 60, "h": 3600}[m.group(2)]
    steps = int(a["--save-interval"])
    check(abs(steps * est["step"]["time_s"] - interval) <= 0.06 * interval + est["step"]["time_s"],
          f"--save-interval {steps} x step {est['step']['time_s']:.2f} s != the {interval:.0f} s interval")
    print(f"ok  deepseek-v3: router, grouped GEMM, norm epsilon, attention backend; --save-interval {steps} = {interval:.0f} s")
    # Qwen3 (config.json rms_norm_eps 1e-6, softmax router renormalising its top-8).
    files, _ = export(trainsim, os.path.join(PLANS, "qwen3_30b_a3b_sft_16xmi300x_megatron.json"), "megatron", tmp)
    a = flags(bash_array(files["pretrain_gpt.sh"], "MEGATRON_ARGS"))
    check(a.get("--norm-epsilon") == "1e-06" and a.get("--moe-router-score-function") == "softmax" and "--moe-router-pre-softmax" not in a,
          f"qwen3: {a.get('--norm-epsilon')} {a.get('--moe-router-score-function')}")
    print("ok  qwen3-30b-a3b: --norm-epsilon 1e-06, softmax router")
    # Grouped experts as priced: Transformer Engine's per-expert cuBLAS calls on 4 streams (the megatron-core preset)
    # launch as TE's default; priced as one grouped kernel (moe_gemm_streams 0), the launch asks TE for its CUTLASS
    # grouped GEMM (NVTE_USE_CUTLASS_GROUPED_GEMM, transformer_engine/common/gemm/cublaslt_gemm.cu).
    plan = os.path.join(PLANS, "qwen3_30b_a3b_sft_16xmi300x_megatron.json")
    with open(plan) as f:
        doc = json.load(f)
    doc["hardware"]["gpu"] = "h100-sxm-80gb"
    on_streams = os.path.join(tmp, "qwen3_30b_a3b_sft_16xh100_streams.json")
    with open(on_streams, "w") as f:
        json.dump(doc, f)
    doc["training"]["framework"] = {"preset": "megatron-core", "moe_gemm_streams": 0}
    grouped = os.path.join(tmp, "qwen3_30b_a3b_sft_16xh100_grouped.json")
    with open(grouped, "w") as f:
        json.dump(doc, f)
    for path, want in ((on_streams, False), (grouped, True)):
        files, _ = export(trainsim, path, "megatron", tmp)
        got = bool(re.search(r"^export NVTE_USE_CUTLASS_GROUPED_GEMM=1\b", files["pretrain_gpt.sh"], re.M))
        check(got == want, f"{os.path.basename(path)}: NVTE_USE_CUTLASS_GROUPED_GEMM=1 {'missing' if want else 'set'}")
    print("ok  grouped experts: NVTE_USE_CUTLASS_GROUPED_GEMM=1 only where priced as one grouped kernel")
    # bf16 Adam moments as priced: Megatron's precision-aware optimizer; DeepSpeed keeps fp32 states and says so.
    a = checked_megatron_flags(trainsim, os.path.join(PLANS, "llama8b_pretrain_8xh100_bf16_moments.json"), tmp)
    check(a.get("--use-precision-aware-optimizer") is True and a.get("--exp-avg-dtype") == "bf16" and a.get("--exp-avg-sq-dtype") == "bf16",
          f"bf16 moments: {a.get('--exp-avg-dtype')} {a.get('--exp-avg-sq-dtype')}")
    print("ok  bf16 Adam moments: --use-precision-aware-optimizer --exp-avg-dtype bf16 --exp-avg-sq-dtype bf16")
    # A quarter of the optimizer offloaded: Megatron's --optimizer-offload-fraction, DeepSpeed's offload_optimizer.ratio.
    plan = os.path.join(PLANS, "llama8b_pretrain_8xh100_offload_quarter.json")
    a = checked_megatron_flags(trainsim, plan, tmp)
    check(a.get("--optimizer-cpu-offload") is True and a.get("--optimizer-offload-fraction") == "0.25", f"offload: {a.get('--optimizer-offload-fraction')}")
    # Priced with the fp32 master on the GPU (offload_keeps_device_master): no precision-aware optimizer, which would
    # make it on the host; ms-swift's DPO example asks for that optimizer, and its launch says so.
    check("--use-precision-aware-optimizer" not in a, "offload: the precision-aware optimizer would move the master")
    with open(plan) as f:
        doc = json.load(f)
    doc["training"]["precision_aware_optimizer"] = True
    aware = os.path.join(tmp, "llama8b_offload_precision_aware.json")
    with open(aware, "w") as f:
        json.dump(doc, f)
    check(checked_megatron_flags(trainsim, aware, tmp).get("--use-precision-aware-optimizer") is True, "offload: precision-aware asked for")
    files, err = export(trainsim, plan, "deepspeed", tmp)
    cfg = json.loads(files["ds_config.json"])
    upstream.check_deepspeed_config(cfg, "offload ds_config.json")
    check(cfg["zero_optimization"]["offload_optimizer"].get("ratio") == 0.25, f"ds offload {cfg['zero_optimization']['offload_optimizer']}")
    print("ok  a quarter offloaded: --optimizer-offload-fraction 0.25; DeepSpeed offload_optimizer.ratio 0.25; precision-aware only when asked for")
    # ZeRO-Infinity: parameters and optimizer states on NVMe, as DeepSpeed's offload_param / offload_optimizer name them;
    # Megatron cannot run it and says so.
    plan = os.path.join(PLANS, "llama70b_sft_1xh100_zero_infinity.json")
    files, err = export(trainsim, plan, "deepspeed", tmp)
    cfg = json.loads(files["ds_config.json"])
    upstream.check_deepspeed_config(cfg, "zero-infinity ds_config.json")
    z = cfg["zero_optimization"]
    check(z["offload_param"]["device"] == "nvme" and z["offload_optimizer"]["device"] == "nvme" and z["offload_param"]["nvme_path"],
          f"zero-infinity: {z.get('offload_param')} {z.get('offload_optimizer')}")
    check("nvme_path /local_nvme is a placeholder" in "".join(files.values()) + err, "zero-infinity: the nvme_path placeholder is said")
    # Megatron keeps its fp32 master on the GPU (offload_keeps_device_master): 70B does not fit one H100 there, and
    # the export says so; a 1B model does, and the launch warns that NVMe offload is DeepSpeed's.
    files, err = export(trainsim, plan, "megatron", tmp, expect=2)
    check("under megatron-core it needs" in err, f"megatron: the 70B plan refused for memory: {err}")
    with open(plan) as f:
        doc = json.load(f)
    doc["model"] = {"name": "llama3.2-1b", "num_hidden_layers": 16, "hidden_size": 2048, "num_attention_heads": 32,
                    "num_key_value_heads": 8, "intermediate_size": 8192, "vocab_size": 128256, "tie_word_embeddings": True,
                    "hidden_act": "silu"}
    small = os.path.join(tmp, "llama1b_sft_1xh100_zero_infinity.json")
    with open(small, "w") as f:
        json.dump(doc, f)
    files, err = export(trainsim, small, "megatron", tmp)
    check("parameter and NVMe offload are DeepSpeed's" in "".join(files.values()) + err, "megatron: NVMe offload warned")
    print("ok  ZeRO-Infinity: offload_param and offload_optimizer on nvme in ds_config.json; Megatron refuses 70B on one GPU, warns at 1B")
    # Priced without a master copy (master_weights_dtype none): the Trainer loads the model in bf16, so AdamW steps the
    # bf16 parameters as priced; Megatron and DeepSpeed keep a master copy whatever they are told, and say so.
    with open(os.path.join(PLANS, "llama8b_sft_16xh100_deepspeed.json")) as f:
        doc = json.load(f)
    doc["training"]["master_weights_dtype"] = "none"
    doc["training"]["zero_stage"] = 0
    doc["training"]["framework"] = "transformers"
    no_master = os.path.join(tmp, "llama8b_sft_no_master.json")
    with open(no_master, "w") as f:
        json.dump(doc, f)
    files, err = export(trainsim, no_master, "hf-trainer", tmp)
    launch = "".join(files.values()) + err
    check("Load the model in bfloat16" in launch and "master_weights_dtype none" not in launch, "hf-trainer: bf16 load, no warning")
    for target in ("megatron", "deepspeed"):
        files, err = export(trainsim, no_master, target, tmp)
        check("master_weights_dtype none: " in "".join(files.values()) + err, f"{target}: the master copy it keeps is not said")
    print("ok  no master copy: the Trainer loads bf16; Megatron and DeepSpeed warn that they keep one")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--trainsim", required=True)
    args = ap.parse_args()
    trainsim = os.path.abspath(args.trainsim)
    with tempfile.TemporaryDirectory(prefix="trainsim-stacks-") as tmp:
        try:
            framework_checks(trainsim, tmp)
            vendor_checks(trainsim, tmp)
            elastic_checks(trainsim, tmp)
            megatron_flag_checks(trainsim, tmp)
        except (Failure, upstream.InterfaceError, KeyError, ValueError, TypeError, yaml.YAMLError, json.JSONDecodeError) as ex:
            print(f"FAIL: {type(ex).__name__}: {ex}")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
