#!/usr/bin/env bash
# STORAGE_LIMIT_RISK and STORAGE_LIMIT_REACHED on a 3-node cluster: the
# cases of test_storage_limit.sh, run there with NL_STORAGE_CLUSTER=1.
NL_STORAGE_CLUSTER=1 exec bash "$(dirname "$0")/test_storage_limit.sh"
