/*
 * raw_submit: submits a batch job through libslurm directly, as sbatch would
 * but without its plugins, so that the job's SPANK environment (what the
 * Prolog reads as SPANK_*) holds exactly what the caller gives. It is how an
 * ordinary user gets values past spank_accel.so's checks; the attacks use it.
 *
 *   raw_submit -J NAME -o OUTPUT [-s VAR=VALUE]... [-i JOBID -u UID:GID] SCRIPT
 *
 * VAR is set without the SPANK_ prefix that slurmd adds (-s ACCEL_IPUS=abc
 * reaches the Prolog as SPANK_ACCEL_IPUS=abc). SCRIPT is the script's text.
 * The job runs in the current directory with the caller's environment.
 * -i and -u are root's (slurmctld refuses them to anyone else): the job gets
 * that id, as a job does when the id comes round again (MaxJobId wrapped, or
 * slurmctld's state was lost), and runs as that user.
 * Prints the job id; exits 1 when the submission fails, 2 on bad usage.
 */
#include <slurm/slurm_errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "accel/slurm/slurm_compat.h"

extern char** environ;

enum { kMaxSpankVars = 64 };

static int usage(void) {
  fprintf(stderr,
          "usage: raw_submit -J NAME -o OUTPUT [-s VAR=VALUE]... [-i JOBID -u UID:GID] SCRIPT\n");
  return 2;
}

int main(int argc, char** argv) {
  const char* name = NULL;
  const char* output = NULL;
  char* spank[kMaxSpankVars];
  unsigned nspank = 0;
  unsigned long job_id = 0, uid = getuid(), gid = getgid();
  int opt;
  while ((opt = getopt(argc, argv, "J:o:s:i:u:")) != -1) {
    switch (opt) {
      case 'J':
        name = optarg;
        break;
      case 'o':
        output = optarg;
        break;
      case 's':
        if (nspank == kMaxSpankVars || strchr(optarg, '=') == NULL) return usage();
        spank[nspank++] = optarg;
        break;
      case 'i':
        job_id = strtoul(optarg, NULL, 10);
        if (job_id == 0 || job_id > 0x03ffffffUL) return usage();
        break;
      case 'u':
        if (sscanf(optarg, "%lu:%lu", &uid, &gid) != 2) return usage();
        break;
      default:
        return usage();
    }
  }
  if (name == NULL || output == NULL || optind + 1 != argc) return usage();

  char cwd[4096];
  if (getcwd(cwd, sizeof cwd) == NULL) {
    perror("raw_submit: getcwd");
    return 1;
  }
  unsigned nenv = 0;
  while (environ[nenv] != NULL) ++nenv;

  slurm_init(NULL);
  job_desc_msg_t desc;
  slurm_init_job_desc_msg(&desc);
  desc.name = (char*)name;
  desc.script = argv[optind];
  desc.std_out = (char*)output;
  desc.work_dir = cwd;
  desc.user_id = (uint32_t)uid;
  desc.group_id = (uint32_t)gid;
  if (job_id != 0) desc.job_id = (uint32_t)job_id;
  desc.min_nodes = 1;
  desc.time_limit = 5;
  desc.environment = environ;
  desc.env_size = nenv;
  desc.spank_job_env = nspank > 0 ? spank : NULL;
  desc.spank_job_env_size = nspank;

  submit_response_msg_t* resp = NULL;
  if (slurm_submit_batch_job(&desc, &resp) != SLURM_SUCCESS) {
    fprintf(stderr, "raw_submit: %s\n", slurm_strerror(errno));
    return 1;
  }
  printf("%u\n", resp->job_id);
  slurm_free_submit_response_response_msg(resp);
  slurm_fini();
  return 0;
}
