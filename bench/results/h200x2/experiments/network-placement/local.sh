#!/usr/bin/env bash
# Runs "$@" on the CPUs local to the GPU of this node-local rank.
r=${OMPI_COMM_WORLD_LOCAL_RANK:-0}
bus=$(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader -i $r | tr 'A-F' 'a-f')
bus=${bus#0000}
cpus=$(cat /sys/bus/pci/devices/$bus/local_cpulist)
echo "local rank $r: GPU $bus, cpus $cpus, numa $(cat /sys/bus/pci/devices/$bus/numa_node)" >&2
exec taskset -c "$cpus" "$@"
