/* cmdimport — `arsim import-profile TRACE.json --model NAME [--out FILE]
 * [--batch B] [--gpu KEY] [--precision P]`: a PyTorch profiler trace of
 * one training step (reportprof.h says how its layers are found) becomes
 * a measured model file: models/NAME.yaml's layers (kind, params,
 * tensors, flops, mem_bytes) with per-layer fwd_ms/bwd_ms and
 * `measured: {batch, gpu, source, precision}`. Written to stdout, or to
 * FILE atomically (temp + rename; never left partial). */
#ifndef ARSIM_CMDIMPORT_H
#define ARSIM_CMDIMPORT_H

#include "cli/cli.h"

extern const CliCmd cmdimport_cli;

/* argv[0] is "import-profile". Prints one-line errors on stderr. Returns
 * the exit status: 0 success, 2 bad input or usage, 1 anything else. */
int cmdimport_main(int argc, char **argv);

#endif
