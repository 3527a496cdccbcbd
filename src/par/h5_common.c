/* h5_common.c - see h5_common.h. */
#include "h5_common.h"

hid_t tl_h5_str_type(void) {
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, H5T_VARIABLE);
  H5Tset_cset(t, H5T_CSET_UTF8);
  return t;
}

tl_status tl_h5_attr_str(hid_t obj, const char *name, const char *value) {
  hid_t t = tl_h5_str_type();
  hid_t sp = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(obj, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
  herr_t rc = a < 0 ? -1 : H5Awrite(a, t, &value);
  if (a >= 0) H5Aclose(a);
  H5Sclose(sp);
  H5Tclose(t);
  return rc < 0 ? TL_EHDF5 : TL_OK;
}
