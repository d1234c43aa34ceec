# trainsim: two commands from a fresh Debian 12 machine.
#   make run   bootstrap, configure, build, then plan the built-in default scenario
#   make test  bootstrap, build with warnings as errors, run every test; then the same tests under ASan+UBSan;
#              then every libFuzzer target over its seeds and committed corpus (a replay: the same everywhere)
JOBS ?= $(shell nproc)
BUILD ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60
CMAKE_GEN := $(shell command -v ninja >/dev/null 2>&1 && echo "-G Ninja")

.PHONY: run test build bootstrap bench asan-test fuzz fuzz-build fuzz-replay accuracy-bands accuracy-readme fit-reference report-screenshots clean

bootstrap:
	@bash scripts/bootstrap.sh

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=Release -DTRAINSIM_WERROR=ON

build: bootstrap $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

run: build
	./$(BUILD)/trainsim plan

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -LE bench
	$(MAKE) asan-test
	$(MAKE) fuzz-replay

# The accuracy bands (presets/accuracy_bands.json) from a fresh run over ../shared/reference/; the
# accuracy.reference test fails until they are regenerated after a model change. Rebuilds to embed them.
# The fitted parameters (Huber M-estimate over ../shared/reference, leave-one-source-out cross-validated), then the
# accuracy bands from the cross-validated errors: both compiled in, so each is followed by a rebuild; then the
# README's accuracy tables.
fit-reference: build
	./$(BUILD)/trainsim calibrate fit-reference --write presets/fitted_parameters.json
	cmake --build $(BUILD) -j $(JOBS)
	./$(BUILD)/tests/trainsim_accuracy --write-bands presets/accuracy_bands.json
	cmake --build $(BUILD) -j $(JOBS)
	$(MAKE) accuracy-readme

# The README's accuracy tables from a fresh run of the accuracy harness, and its `$ ./build/trainsim ...` blocks from
# the commands' current output (part of fit-reference).
accuracy-readme: build
	bash scripts/readme_accuracy.sh $(BUILD)
	python3 scripts/readme_outputs.py README.md

accuracy-bands: fit-reference

$(ASAN_BUILD)/CMakeCache.txt:
	cmake -S . -B $(ASAN_BUILD) $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=Debug -DTRAINSIM_WERROR=ON \
	  -DTRAINSIM_SANITIZE=ON -DTRAINSIM_BENCH=OFF

# Tests labelled `long` reproduce published results over whole traces (minutes under the sanitizers); the code
# they run is exercised under ASan by the unit tests.
asan-test: bootstrap $(ASAN_BUILD)/CMakeCache.txt
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	  ctest --output-on-failure -j $(JOBS) -LE 'bench|slurm|long'

# libFuzzer targets for every parser (clang, ASan + UBSan). `fuzz-replay` (part of `make test`) runs each over its
# seeds and the committed corpus tests/fuzz/corpus: the same inputs on every machine. `fuzz` searches for new
# findings for FUZZ_SECONDS per target (FUZZ_MERGE=1 adds what it found to the committed corpus).
$(FUZZ_BUILD)/CMakeCache.txt:
	cmake -S . -B $(FUZZ_BUILD) $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
	  -DTRAINSIM_FUZZ=ON -DTRAINSIM_WERROR=OFF -DTRAINSIM_BENCH=OFF

fuzz-build: bootstrap $(FUZZ_BUILD)/CMakeCache.txt
	cmake --build $(FUZZ_BUILD) -j $(JOBS)

fuzz-replay: fuzz-build
	bash tests/fuzz/run_fuzzers.sh $(FUZZ_BUILD)

fuzz: fuzz-build
	FUZZ_SECONDS=$(FUZZ_SECONDS) bash tests/fuzz/run_fuzzers.sh $(FUZZ_BUILD)

# The README's screenshots of each HTML report kind (docs/screenshots/<kind>.png), rendered in headless Chromium;
# the report commands are listed in scripts/report_screenshots.sh. Fails when chromium is not installed.
report-screenshots: build
	bash scripts/report_screenshots.sh $(BUILD)

bench: build
	./$(BUILD)/tests/bench/trainsim_bench
	./$(BUILD)/tests/bench/trainsim_sim_bench --benchmark_filter=SimulateGpt3/1024

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
