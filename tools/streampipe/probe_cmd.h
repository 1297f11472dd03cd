/* `streampipe probe`: what this machine's copy paths reach (streampipe_probe.h measures). */
#ifndef SP_CLI_PROBE_CMD_H
#define SP_CLI_PROBE_CMD_H

#include <stdio.h>

#include "streampipe_probe.h"

/* `streampipe probe [options]`; argv[0] is "probe". Returns a cli_exit code. */
int probe_main(int argc, char **argv);

/* probe_cmd_print.c: the result as text, or as one JSON object. */
void probe_print_result(const sp_probe_result *r, int device, int json, FILE *out);

#endif /* SP_CLI_PROBE_CMD_H */
