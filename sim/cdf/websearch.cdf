# WebSearch flow sizes: the web search workload of DCTCP (M. Alizadeh et al., "Data Center
# TCP (DCTCP)", SIGCOMM 2010), as HPCC's simulations use it (Y. Li et al., "HPCC: High
# Precision Congestion Control", SIGCOMM 2019).
#
# Source: github.com/alibaba-edu/High-Precision-Congestion-Control,
#   traffic_gen/WebSearch_distribution.txt (commit 9cf8b9e8c8d04a3775e06c972c4699dcbce53c37).
# The same points; HPCC's probabilities are in percent, these are the same divided by 100.
# Mean 1711250 bytes (docs/workloads.md).
#
# SIZE_BYTES CUMULATIVE_PROBABILITY
0 0
10000 0.15
20000 0.2
30000 0.3
50000 0.4
80000 0.53
200000 0.6
1000000 0.7
2000000 0.8
5000000 0.9
10000000 0.97
30000000 1
