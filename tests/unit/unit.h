/* unit.h - what every cmocka unit test includes first. */
#ifndef PG_UNIT_H
#define PG_UNIT_H

#include "common/compat.h"

#include <setjmp.h>
#include <cmocka.h>

#endif
