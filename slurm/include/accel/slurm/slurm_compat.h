/* What differs between the libslurm versions accel-agent builds against:
 * Debian 12's 22.05 and Debian 13's 24.11. Every version check of the
 * sources is here; code below slurm/ (and its tests) that calls
 * libslurm includes this instead of <slurm/slurm.h>. C and C++.
 *
 * - Lists: 22.05 has only the pointer typedefs `List` and `ListIterator`;
 *   23.02 added `list_t` and `list_itr_t` (the structs) and 24.05 removed the
 *   old names. The code uses `list_t *` and `list_itr_t *`, defined here for
 *   22.05.
 * - Errors: `slurm_get_errno()` is gone in 24.11; in every version it returned
 *   `errno`, which libslurm sets to the Slurm error code, so the code reads
 *   `errno` (no check needed).
 * - SPANK: spank.h is the same for what the plugin uses (items, return
 *   codes); the plugin must still be built per version, since slurmstepd
 *   refuses one whose plugin_version is not its own.
 */
#ifndef ACCEL_SLURM_SLURM_COMPAT_H
#define ACCEL_SLURM_SLURM_COMPAT_H

#include <errno.h>
#include <slurm/slurm.h>
#include <slurm/slurm_version.h>

#if SLURM_VERSION_NUMBER < SLURM_VERSION_NUM(23, 2, 0)
typedef struct xlist list_t;
typedef struct listIterator list_itr_t;
#endif

/* "22.05.8": the libslurm this was built against, for messages. */
#define ACCEL_SLURM_BUILT_AGAINST SLURM_VERSION_STRING

#endif
