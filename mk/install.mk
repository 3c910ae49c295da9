# install fragment (install, uninstall)
