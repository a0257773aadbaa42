# gpucluster.training: set-up, local lab and tests.  `make help` lists the targets.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
ROOT := $(CURDIR)
VENV := $(ROOT)/.venv
export PATH := $(VENV)/bin:$(PATH)
export CONTAINERS_CONF ?= $(ROOT)/tools/containers.conf
export ANSIBLE_CONFIG := $(ROOT)/ansible.cfg
export ANSIBLE_FORCE_COLOR ?= false
export PY_COLORS ?= 0
S ?= base
SCENARIOS := $(sort $(notdir $(patsubst %/molecule.yml,%,$(wildcard molecule/*/molecule.yml))))

.PHONY: help setup lab lab-up lab-test lab-finetune lab-down bench test unit lint lint-only sanity units harness molecule molecule-all podman-check clean

help:
	@echo "make setup       install Debian packages, .venv, node images (idempotent; root)"
	@echo "make lab         bring up the lab (ctl1 gpu1 gpu2) and run site.yml on it"
	@echo "make lab-test    make lab, then site.yml through ansible-runner as an AWX job (twice)"
	@echo "make lab-finetune  after make lab: the Alpaca FSDP fine-tuning job through Slurm, requeued and resumed"
	@echo "make lab-down    remove the lab containers and network"
	@echo "make bench       bench/converge: floor, cold, rerun and node-count sweep of site.yml (about"
	@echo "                 1-2 h on 2 cores; BENCH_PARTS/BENCH_SIZES/BENCH_REPEAT pick a quicker run)"
	@echo "make test        the whole suite (CI): setup, lint, sanity, units, harness, every Molecule"
	@echo "                 scenario two at a time; prints the time of every phase"
	@echo "make unit | units | lint | sanity | harness | molecule S=<scenario>"

setup:
	tools/setup.sh

lab: setup lab-up
	tools/lab-run.sh

lab-up:
	tools/lab.sh up

lab-test: lab
	python -m pytest tests/lab -q -p no:cacheprovider

lab-finetune:
	tools/lab-finetune.sh

lab-down:
	tools/lab.sh down

# Not part of make test: speed is measured here, never asserted in tests.
bench: setup
	bench/converge

test:
	tools/test-all.sh

unit: setup
	PYTHONPATH=$(ROOT)/.tmp/collections python -m pytest tests/unit -q -p no:cacheprovider

harness: setup
	python -m pytest tests/harness -q -p no:cacheprovider

lint: setup lint-only

lint-only:
	yamllint -s .
	ansible-lint --offline --profile production
	tools/galaxy-import-check.sh

podman-check:
	tools/podman-check.sh

sanity: setup
	tools/ansible-test.sh sanity

units: setup
	tools/ansible-test.sh units

molecule: setup
	tools/molecule.sh $(S)

molecule-all: setup
	@for s in $(SCENARIOS); do echo "== molecule test -s $$s"; tools/molecule.sh $$s || exit 1; done

clean: lab-down
	rm -rf .tmp tests/output
