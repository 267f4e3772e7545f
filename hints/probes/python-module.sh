# shellcheck shell=bash disable=SC1083
# python-module.sh -- what to install for a Python module that is missing
# (hint python-module): its pip name, which differs from the import name
# for some.  {o1} is the module, a placeholder (cd-guard.sh says why SC1083
# is off).
#
# Exit 0: prints the pip name; 2: prints the apt-get line of a module
# Debian brings; 3: the module is a file or folder of the user's.
m={o1}
[ -e "$m.py" ] || [ -d "$m" ] && exit 3
case $m in
    tkinter | _tkinter)
        echo 'apt-get update && apt-get install -y python3-tk'
        exit 2
        ;;
esac
case $m in
    cv2) m=opencv-python-headless ;;
    PIL) m=Pillow ;;
    sklearn) m=scikit-learn ;;
    skimage) m=scikit-image ;;
    yaml) m=PyYAML ;;
    bs4) m=beautifulsoup4 ;;
    dateutil) m=python-dateutil ;;
    dotenv) m=python-dotenv ;;
    Crypto) m=pycryptodome ;;
    jwt) m=PyJWT ;;
    serial) m=pyserial ;;
    usb) m=pyusb ;;
    magic) m=python-magic ;;
    docx) m=python-docx ;;
    pptx) m=python-pptx ;;
    OpenSSL) m=pyOpenSSL ;;
    attr) m=attrs ;;
    google) m=protobuf ;;
    MySQLdb) m=mysqlclient ;;
    psycopg2) m=psycopg2-binary ;;
    fitz) m=PyMuPDF ;;
    distutils) m=setuptools ;;
esac
echo "$m"
