/* version — the arsim release string, recorded in sweep definitions and
 * reports so every result names the simulator that produced it. */
#ifndef ARSIM_VERSION_H
#define ARSIM_VERSION_H

#define ARSIM_VERSION "0.1.0"

#endif
