#!/bin/bash
cpu=$(ps -A -o %cpu | awk '{s+=$1} END {printf "%.0f", s}')
mem=$(memory_pressure | awk '/percentage/ {print $5}')
echo "CPU ${cpu}% · MEM ${mem}"
