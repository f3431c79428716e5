/* cmdimport — `arsim import-profile TRACE.json --model NAME [--out FILE]
 * [--batch B] [--gpu KEY] [--precision P]`: a PyTorch profiler trace of
 * one training step (reportprof.h says how its layers are found) becomes
 * a measured model file: models/NAME.yaml's layers (kind, params,
 * tensors, flops, mem_bytes) with per-layer fwd_ms/bwd_ms and
 * `measured: {batch, gpu, source, precision}`. Written to stdout, or to
 * FILE atomically (temp + rename; never left partial). */
#ifndef ARSIM_CMDIMPORT_H
#define ARSIM_CMDIMPORT_H

/* argv[0] is the command name ("import-profile"). Parses its own options;
 * prints one-line errors on stderr. Returns the exit status: 0 success, 2
 * bad input or usage, 1 anything else. */
int cmdimport_main(int argc, char **argv);

#endif
