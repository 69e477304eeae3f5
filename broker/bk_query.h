/* bk_query.h: QUERY_MESSAGE (messages by key from the key index). */
#ifndef BK_QUERY_H
#define BK_QUERY_H

#include "bk_broker.h"

/* Installs the QUERY_MESSAGE handler on bk->srv. Loop thread. */
void bk_query_install(bk_broker_t *bk);

#endif
