/* banned.h - libc calls that are easy to misuse are refused at compile time. */
#ifndef PG_BANNED_H
#define PG_BANNED_H

/*
 * Included last by common/compat.h, after the system headers that declare
 * these functions, so that only our own code is affected.
 */
#define PG_BANNED(func) sorry_##func##_is_banned_in_pullgate

#undef strcpy
#define strcpy(x, y) PG_BANNED(strcpy)
#undef strcat
#define strcat(x, y) PG_BANNED(strcat)
#undef strncpy
#define strncpy(x, y, n) PG_BANNED(strncpy)
#undef strncat
#define strncat(x, y, n) PG_BANNED(strncat)
#undef sprintf
#define sprintf(...) PG_BANNED(sprintf)
#undef vsprintf
#define vsprintf(...) PG_BANNED(vsprintf)
#undef gets
#define gets(x) PG_BANNED(gets)
#undef strtok
#define strtok(x, y) PG_BANNED(strtok)
#undef system
#define system(x) PG_BANNED(system)
#undef popen
#define popen(x, y) PG_BANNED(popen)
#undef atoi
#define atoi(x) PG_BANNED(atoi)

#endif
