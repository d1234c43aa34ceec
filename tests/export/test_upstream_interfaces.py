#!/usr/bin/env python3
"""Self-test of upstream_interfaces.py: each checker accepts a small valid sample written from the upstream
file cited beside it, and refuses a misspelled name, a wrong kind and a bad choice with a message naming it.
Also: every snapshot names its repository and a 40-hex commit. Exit 1 on any failure."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import upstream_interfaces as U  # noqa: E402

failures = []


def accepts(name, check, *args):
    try:
        check(*args)
        print(f"ok  accepts {name}")
    except U.InterfaceError as e:
        failures.append(f"{name}: refused a valid sample: {e}")


def refuses(name, must_name, check, *args):
    try:
        check(*args)
        failures.append(f"{name}: accepted an invalid sample (expected a message naming {must_name!r})")
    except U.InterfaceError as e:
        if must_name not in str(e):
            failures.append(f"{name}: message does not name {must_name!r}: {e}")
        else:
            print(f"ok  refuses {name}: {e}")


# Every snapshot says where its facts come from.
for name in U.SOURCES:
    s = U.load(name)
    if not re.fullmatch(r"[0-9a-f]{40}", s.get("commit") or "") or "/" not in s.get("repository", "") \
            or not s.get("files") or not re.fullmatch(r"\d{4}-\d\d-\d\d", s.get("extracted", "")):
        failures.append(f"{name}.json: repository / commit / files / extracted missing or malformed")

# Megatron-LM, megatron/training/arguments.py: --tensor-model-parallel-size (int, from ModelParallelConfig via
# ArgumentGroupFactory), --bf16 (store_true), --recompute-granularity (Literal['full', 'selective']),
# --lr (type=float), --data-path (nargs='*').
good = ["--tensor-model-parallel-size", "2", "--bf16", "--recompute-granularity", "full", "--lr", "3e-4",
        "--data-path", "1.0", "/data/a_text_document"]
accepts("megatron args", U.check_megatron_args, good)
parsed = U.check_megatron_args(good)
if parsed.get("--tensor-model-parallel-size") != "2" or parsed.get("--bf16") is not True:
    failures.append(f"megatron args parsed as {parsed}")
refuses("megatron misspelled flag", "--tensor-model-paralel-size", U.check_megatron_args,
        ["--tensor-model-paralel-size", "2"])
refuses("megatron wrong kind", "--tensor-model-parallel-size", U.check_megatron_args,
        ["--tensor-model-parallel-size", "two"])
refuses("megatron bad choice", "--recompute-granularity", U.check_megatron_args,
        ["--recompute-granularity", "partial"])
refuses("megatron switch with a value", "--bf16", U.check_megatron_args, ["--bf16", "true"])
accepts("megatron names only", U.check_megatron_args, ["--seq-length", "x"], "args", True)

# DeepSpeed: deepspeed/runtime/constants.py (train_batch_size, gradient_clipping), zero/config.py
# (DeepSpeedZeroConfig: stage, stage3_prefetch_bucket_size alias), zero/offload_config.py (device: none|cpu|nvme),
# precision_config.py (bf16.enabled), activation_checkpointing/config.py (partition_activations).
ds = {"comment": ["ours"], "train_batch_size": 32, "gradient_clipping": 1.0, "bf16": {"enabled": True},
      "zero_optimization": {"stage": 3, "stage3_prefetch_bucket_size": 50000000,
                            "offload_optimizer": {"device": "cpu", "pin_memory": True}},
      "activation_checkpointing": {"partition_activations": True}, "optimizer": {"type": "AdamW", "params": {}}}
accepts("deepspeed config", U.check_deepspeed_config, ds)
refuses("deepspeed misspelled top-level key", "train_batch_sizes", U.check_deepspeed_config,
        dict(ds, train_batch_sizes=32))
refuses("deepspeed misspelled zero key", "zero_optimization.overlap_com", U.check_deepspeed_config,
        dict(ds, zero_optimization={"stage": 1, "overlap_com": True}))
refuses("deepspeed wrong kind", "bf16.enabled", U.check_deepspeed_config, dict(ds, bf16={"enabled": "yes"}))
refuses("deepspeed bad choice", "offload_optimizer.device", U.check_deepspeed_config,
        dict(ds, zero_optimization={"stage": 2, "offload_optimizer": {"device": "gpu"}}))
refuses("deepspeed misspelled activation key", "partitioned_activations", U.check_deepspeed_config,
        dict(ds, activation_checkpointing={"partitioned_activations": True}))
refuses("deepspeed deprecated key", "cpu_offload", U.check_deepspeed_config,
        dict(ds, zero_optimization={"stage": 2, "cpu_offload": True}))

# transformers, src/transformers/training_args.py: per_device_train_batch_size: int, bf16: bool,
# optim: OptimizerNames | str, ddp_backend choices.
ta = {"output_dir": "out", "per_device_train_batch_size": 4, "bf16": True, "optim": "adamw_torch_fused",
      "ddp_backend": "nccl", "report_to": ["tensorboard"]}
accepts("TrainingArguments", U.check_training_arguments, ta)
refuses("TrainingArguments misspelled", "per_device_train_batchsize", U.check_training_arguments,
        {"per_device_train_batchsize": 4})
refuses("TrainingArguments wrong kind", "per_device_train_batch_size", U.check_training_arguments,
        {"per_device_train_batch_size": "4"})
refuses("TrainingArguments bad choice", "optim", U.check_training_arguments, {"optim": "adamw_hf2"})

# accelerate, commands/config/config_args.py (ClusterConfig), utils/dataclasses.py (DistributedType),
# commands/launch.py (--mixed_precision choices, --fsdp_* and --zero_stage options).
acc = {"compute_environment": "LOCAL_MACHINE", "distributed_type": "FSDP", "mixed_precision": "bf16",
       "num_machines": 1, "num_processes": 8, "machine_rank": 0, "use_cpu": False, "debug": False,
       "fsdp_config": {"fsdp_version": 2, "fsdp_offload_params": False, "reshard_after_forward": True},
       "deepspeed_config": {"zero_stage": 3}}
accepts("accelerate config", U.check_accelerate_config, acc)
refuses("accelerate misspelled key", "num_proceses", U.check_accelerate_config, dict(acc, num_proceses=8))
refuses("accelerate bad distributed_type", "distributed_type", U.check_accelerate_config,
        dict(acc, distributed_type="MULTI_GPUS"))
refuses("accelerate misspelled fsdp key", "fsdp_offload_param", U.check_accelerate_config,
        dict(acc, fsdp_config={"fsdp_offload_param": True}))
refuses("accelerate wrong kind", "num_machines", U.check_accelerate_config, dict(acc, num_machines="one"))

# TRL, trl/trainer/dpo_config.py (beta: float, truncation_mode choices), model_config.py (dtype choices),
# scripts/utils.py (ScriptArguments.dataset_name), and TrainingArguments fields through DPOConfig.
dpo = {"model_name_or_path": "m", "dtype": "bfloat16", "dataset_name": "d", "beta": 0.1,
       "learning_rate": "5e-7", "per_device_train_batch_size": 2, "truncation_mode": "keep_start",
       "env": {"WANDB_MODE": "offline"}}
accepts("trl dpo config", U.check_trl_dpo_config, dpo)
refuses("trl misspelled", "betta", U.check_trl_dpo_config, dict(dpo, betta=0.1))
refuses("trl wrong kind", "beta", U.check_trl_dpo_config, dict(dpo, beta="high"))
refuses("trl bad choice", "dtype", U.check_trl_dpo_config, dict(dpo, dtype="fp16"))

# ms-swift, swift/arguments/rlhf_args.py (rlhf_type Literal), swift/megatron/arguments/megatron_args.py
# (micro_batch_size: int, recompute_granularity Literal, tuner_type Literal), base_args.py (model).
accepts("swift rlhf", U.check_swift_args, "swift rlhf", ["--rlhf_type", "dpo", "--model", "Qwen/Qwen3-8B"])
accepts("megatron sft", U.check_swift_args, "megatron sft",
        ["--model", "m", "--micro_batch_size", "1", "--recompute_granularity", "full", "--tuner_type", "lora"])
refuses("swift misspelled", "--rlhf_typ", U.check_swift_args, "swift rlhf", ["--rlhf_typ", "dpo"])
refuses("swift bad choice", "--rlhf_type", U.check_swift_args, "swift rlhf", ["--rlhf_type", "ppo2"])
refuses("swift wrong kind", "--micro_batch_size", U.check_swift_args, "megatron sft", ["--micro_batch_size", "x"])

# torchtitan v0.2.2, torchtitan/config/job_config.py: [parallelism] tensor_parallel_degree: int,
# fsdp_reshard_after_forward Literal['default', 'always', 'never']; [training] steps: int.
tt = {"job": {"dump_folder": "./out"}, "training": {"steps": 100, "local_batch_size": 8},
      "parallelism": {"tensor_parallel_degree": 2, "fsdp_reshard_after_forward": "default"}}
accepts("torchtitan toml", U.check_torchtitan_config, tt)
refuses("torchtitan misspelled", "parallelism.tensor_parallel_degre", U.check_torchtitan_config,
        {"parallelism": {"tensor_parallel_degre": 2}})
refuses("torchtitan unknown section", "paralelism", U.check_torchtitan_config, {"paralelism": {}})
refuses("torchtitan bad choice", "fsdp_reshard_after_forward", U.check_torchtitan_config,
        {"parallelism": {"fsdp_reshard_after_forward": "sometimes"}})

# Volcano, config/crd/volcano/bases/batch.volcano.sh_jobs.yaml: spec.minAvailable integer, tasks[].template
# a PodTemplateSpec (containers[].resources.limits int-or-string values).
container = {"name": "c", "image": "i", "args": ["run"], "resources": {"limits": {"nvidia.com/gpu": 8}},
             "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}]}
vc = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "j"},
      "spec": {"minAvailable": 2, "schedulerName": "volcano", "queue": "default",
               "plugins": {"env": [], "svc": []}, "policies": [{"event": "PodFailed", "action": "RestartJob"}],
               "tasks": [{"name": "w", "replicas": 2, "template": {"spec": {"containers": [container]}}}]}}
accepts("volcano job", U.check_volcano_job, vc)
bad = {**vc, "spec": {**vc["spec"], "minAvaliable": 2}}
refuses("volcano misspelled", "spec.minAvaliable", U.check_volcano_job, bad)
bad = {**vc, "spec": {**vc["spec"], "minAvailable": "two"}}
refuses("volcano wrong type", "spec.minAvailable", U.check_volcano_job, bad)
bad_container = dict(container, volumeMount=[])
bad = {**vc, "spec": {**vc["spec"], "tasks": [{"name": "w", "template": {"spec": {"containers": [bad_container]}}}]}}
refuses("volcano container field", "volumeMount", U.check_volcano_job, bad)
bad = {**vc, "spec": {**vc["spec"], "tasks": [dict(vc["spec"]["tasks"][0], topologyPolicy="strict")]}}
refuses("volcano bad enum", "topologyPolicy", U.check_volcano_job, bad)

# Kubeflow training-operator release-1.9, manifests/base/crds/kubeflow.org_pytorchjobs.yaml: nprocPerNode is a
# string, pytorchReplicaSpecs.<role>.replicas an integer, restartPolicy an enum.
master = {"replicas": 1, "restartPolicy": "OnFailure",
          "template": {"spec": {"containers": [dict(container, name="pytorch")]}}}
pj = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "j"},
      "spec": {"nprocPerNode": "8", "runPolicy": {"schedulingPolicy": {"queue": "q", "minAvailable": 2}},
               "pytorchReplicaSpecs": {"Master": master}}}
accepts("pytorchjob", U.check_pytorchjob, pj)
refuses("pytorchjob wrong type", "spec.nprocPerNode", U.check_pytorchjob,
        {**pj, "spec": {**pj["spec"], "nprocPerNode": 8}})
bad = {**pj, "spec": {**pj["spec"], "runPolicy": {"schedulingPolicy": {"queueName": "q"}}}}
refuses("pytorchjob misspelled", "queueName", U.check_pytorchjob, bad)
# (this CRD lists no enum values, e.g. restartPolicy's are only in its description; a required field is checked)
nameless = {k: v for k, v in container.items() if k != "name"}
master = dict(pj["spec"]["pytorchReplicaSpecs"]["Master"], template={"spec": {"containers": [nameless]}})
bad = {**pj, "spec": {**pj["spec"], "pytorchReplicaSpecs": {"Master": master}}}
refuses("pytorchjob required field", "name missing", U.check_pytorchjob, bad)
refuses("pytorchjob apiVersion", "kubeflow.org/v2", U.check_pytorchjob, dict(pj, apiVersion="kubeflow.org/v2"))

if failures:
    print("FAIL:\n  " + "\n  ".join(failures))
    sys.exit(1)
print("all upstream interface checks behave")
