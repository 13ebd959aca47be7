#!/usr/bin/env bash
# Connect Four TD-FARL on one accelerator, as one command on a fresh machine (about 10 minutes
# on a GPU):
#
#   bash benchmarks/gpu.sh        installs jaxgames with jax for CUDA into .venv-gpu (set
#                                 JAX_CUDA=cuda12 for CUDA 12 drivers; PIP_FIND_LINKS for a
#                                 wheel folder on a machine without the registry), prints the
#                                 device, measures training throughput (moves/s, games/s,
#                                 learning included) at B = 1k, 4k, 16k and 64k, the devices
#                                 table at B = 64k (benchmarks/devices.py: one GPU, and on a
#                                 machine with several, split over all of them), then trains the
#                                 preset connect4-td-farl-gpu, evaluating beside training, and
#                                 prints when it first scored >= 0.985 points against the
#                                 perfect player (agent first, 200 games) and the wall time
#   bash benchmarks/gpu.sh --cpu  the same steps at small sizes with the python on PATH (or
#                                 $PYTHON), no install: what tests/test_benchmarks.py runs
set -euo pipefail
cd "$(dirname "$0")/.."
run_dir=${GPU_RUN_DIR:-runs/gpu-$(date +%Y%m%d-%H%M%S)}
if [[ "${1:-}" == "--cpu" ]]; then
  py=${PYTHON:-python3}
  sizes=(64)
  subs=(0 16)
  seconds=1
  chunk=(--chunk-steps 16)  # short chunks: the warm-up and the measured second, not 20k moves each
  train=(--train.games 1600 --train.batch-size 128 --algorithm.sub-batch 32
         --train.checkpoint-every 0 --eval.every 800 --eval.games 2 --eval.opponent random)
  target=0.5
else
  python3 -m venv .venv-gpu
  .venv-gpu/bin/pip install -q -e . "jax[${JAX_CUDA:-cuda13}]"
  py=.venv-gpu/bin/python
  sizes=(1024 4096 16384 65536)
  subs=(0 256)
  seconds=10
  chunk=()
  train=()
  target=0.985
fi
start=$(date +%s)
"$py" -c 'import jax; d = jax.devices()[0]
print(f"device: {d.platform} {d.device_kind}, {jax.device_count()} device(s), jax {jax.__version__}")'
"$py" benchmarks/learning.py throughput --preset connect4-td-farl-gpu \
  --batch-sizes "${sizes[@]}" --sub-batches "${subs[@]}" --seconds "$seconds" "${chunk[@]}"
if [[ "${1:-}" != "--cpu" ]]; then  # the devices table: one GPU, and all of them where several
  n=$("$py" -c 'import jax; print(jax.device_count())')
  devices=(1)
  if (( n > 1 )); then devices+=("$n"); fi
  "$py" benchmarks/devices.py --real --batch-size 65536 --devices "${devices[@]}" \
    --seconds "$seconds"
fi
"$py" -m jaxgames train connect4-td-farl-gpu --run-dir "$run_dir" --no-progress "${train[@]}"
"$py" benchmarks/first_reached.py "$run_dir/metrics.jsonl" --points "$target"
echo "wall time of the whole command: $(( $(date +%s) - start )) s"
