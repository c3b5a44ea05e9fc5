object 1c21c1b93180827d971918cdfc77cedc5136e644
type commit
tag hardening-v6.16-rc1-fix1-take2
tagger Kees Cook <kees@kernel.org> 1748793600 -0700

hardening fixes for v6.16-rc1

- randstruct: gcc-plugin: Fix attribute addition with GCC 15

- ubsan: integer-overflow: depend on BROKEN to keep this out of CI

- overflow: Introduce __DEFINE_FLEX for having no initializer

- wifi: iwlwifi: mld: Work around Clang loop unrolling bug
-----BEGIN PGP SIGNATURE-----

iHUEABYIAB0WIQQd9DDX6Z53MYZbBu5TlZ58BTPlHgUCaxHE+QAKCRBTlZ58BTPl
Hv32AQDUq+DOJn3sPYHdX9qowG2nB2XdhVIImKYge2LsdO/JbwD9GKQbh8W2H/OU
ik0IiubcWMpwu9CEQ5j4y3BgQNlhuwc=
=2PIA
-----END PGP SIGNATURE-----
