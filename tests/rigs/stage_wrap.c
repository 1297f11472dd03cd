/* One stage around another (stage_wrap.h). */
#include "stage_wrap.h"

static sp_status wrap_host(const sp_chunk *c, void *user)
{
    stage_wrap *w = user;
    sp_status st = w->before(c, w->arg);
    return st != SP_OK ? st : w->inner.host(c, w->inner.user);
}

static sp_status wrap_cuda(const sp_chunk *c, void *user)
{
    stage_wrap *w = user;
    sp_status st = w->before(c, w->arg);
    return st != SP_OK ? st : w->inner.cuda(c, w->inner.user);
}

sp_stage stage_wrap_desc(stage_wrap *w)
{
    sp_stage s = w->inner;
    s.host = w->inner.host ? wrap_host : NULL;
    s.cuda = w->inner.cuda ? wrap_cuda : NULL;
    s.user = w;
    return s;
}
