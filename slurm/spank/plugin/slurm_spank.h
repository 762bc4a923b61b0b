#pragma once
// Slurm's spank.h declares the plugin callbacks (slurm_spank_init, ...) above
// its own extern "C" block, so a C++ file that includes it plainly gives them
// C++ linkage and cannot define them for Slurm. Every file of the plugin
// includes spank.h through here instead.
extern "C" {
#include <slurm/spank.h>
}
