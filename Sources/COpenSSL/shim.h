#ifndef SOCIALPIPE_COPENSSL_SHIM_H
#define SOCIALPIPE_COPENSSL_SHIM_H
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/err.h>
#include <openssl/bio.h>
#include <openssl/x509.h>
#endif
